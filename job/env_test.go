package job

import (
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/network/features"
)

// A request names a folder as a user types it ("real/", "./real"): the
// names reach an fs.FS cleaned, since fs.ValidPath refuses them as they
// are; names outside the tree stay refused.
func TestEnvCleansNames(t *testing.T) {
	env := Env{FS: fstest.MapFS{"real/a.png": {Data: []byte("x")}, "real/sub/b.png": {Data: []byte("y")}, "x.npy": {Data: []byte("z")}}}
	fsys := env.InputFS()
	for _, name := range []string{"real/", "./real", "real//sub/", "./x.npy", "real/./a.png"} {
		if _, err := fs.Stat(fsys, name); err != nil {
			t.Errorf("Stat %q: %v", name, err)
		}
	}
	if b, err := fs.ReadFile(fsys, "./x.npy"); err != nil || string(b) != "z" {
		t.Errorf("ReadFile: %q, %v", b, err)
	}
	for _, name := range []string{"../x.npy", "/x.npy", "real/../../x.npy"} {
		if _, err := fs.Stat(fsys, name); err == nil {
			t.Errorf("Stat %q: no error for a name outside the tree", name)
		}
	}
	got, err := features.ListImagesFS(fsys, "real/", true)
	if err != nil || len(got) != 2 || got[0] != "real/a.png" || got[1] != "real/sub/b.png" {
		t.Errorf("ListImagesFS(real/) = %q, %v", got, err)
	}
	if st, err := fs.Stat(fsys, "real/"); err != nil || !st.IsDir() {
		t.Error("real/ is not a folder")
	}
	if (Env{}).InputFS() != dataio.HostFS || (Env{FS: dataio.HostFS}).InputFS() != dataio.HostFS {
		t.Error("the host's files are wrapped")
	}
}
