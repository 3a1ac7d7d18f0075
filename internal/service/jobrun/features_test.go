package jobrun

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/store/records"
	"github.com/genlens/genlens/internal/testkit/shareddata"
)

// zipOf archives files (name → bytes) in memory.
func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFeaturesKind runs features on three fixture images uploaded as a
// .zip with the random-weight network uploaded as a .pth, and compares
// with PyTorch's features; the server's configured weights serve a
// request that names none.
func TestFeaturesKind(t *testing.T) {
	dir := shareddata.Path(t, "fixtures/inception_random")
	imgs := map[string][]byte{"readme.txt": []byte("not an image")}
	for _, n := range []string{"img000.png", "img001.png", "img002.png"} {
		b, err := os.ReadFile(filepath.Join(dir, "images", n))
		if err != nil {
			t.Fatal(err)
		}
		imgs["imgs/"+n] = b
	}
	weightsPath := filepath.Join(dir, "inception_random.pth")
	s := newTestService(t, nil, Config{Weights: weightsPath})
	ctx := context.Background()
	archive := upload(t, s, "images.zip", zipOf(t, imgs))
	w, err := os.ReadFile(weightsPath)
	if err != nil {
		t.Fatal(err)
	}
	weights := upload(t, s, "inception_random.pth", w)
	want, err := dataio.ReadArray(filepath.Join(dir, "expected.npz"), dataio.ReadOptions{Key: "tf_pool768"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ body, weights string }{
		{`{"input":"` + archive + `","dims":"768","mode":"tf","batch":2,"recursive":true,"weights":"` + weights + `"}`, weights},
		{`{"input":"` + archive + `","dims":"768","mode":"tf","batch":2,"recursive":true}`, "server:inception_random.pth"},
	} {
		body := c.body
		j, err := s.Submit(ctx, "features", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		j = waitJob(t, s, j.ID, 2*time.Minute)
		if j.Status != records.StatusSucceeded {
			t.Fatalf("%s: %s %s", body, j.Status, j.Error)
		}
		var res struct {
			Images  int
			Weights struct {
				Path     string
				SHA256   string
				Official *bool
			}
		}
		if err := json.Unmarshal(j.Result, &res); err != nil {
			t.Fatal(err)
		}
		// The weights as the client knows them, never a path on the
		// server, and not the published FID file.
		if res.Images != 3 || res.Weights.Path != c.weights || len(res.Weights.SHA256) != 64 || res.Weights.Official == nil || *res.Weights.Official || j.Done != 3 || j.Total != 3 {
			t.Errorf("result %s, progress %d/%d", j.Result, j.Done, j.Total)
		}
		a, err := s.Artifact(ctx, j.ID, "features.npy")
		if err != nil {
			t.Fatal(err)
		}
		got, err := dataio.ReadArrayFS(fstest.MapFS{"f.npy": {Data: a.Data}}, "f.npy", dataio.ReadOptions{})
		if err != nil || len(got.Shape) != 2 || got.Shape[0] != 3 || got.Shape[1] != 768 {
			t.Fatalf("features.npy: %v %v", got, err)
		}
		for i, v := range got.Data {
			if math.Abs(v-want.Data[i]) > 1e-4 {
				t.Fatalf("feature %d: %g, PyTorch %g", i, v, want.Data[i])
			}
		}
	}
}

func TestFeaturesRequests(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	archive := upload(t, s, "images.zip", zipOf(t, map[string][]byte{"a.png": {1}}))
	npyID := upload(t, s, "x.npy", []byte{1, 2})
	for _, c := range []struct{ body, field string }{
		{`{"input":"` + npyID + `","weights":"` + npyID + `"}`, "input"},
		{`{"input":"` + archive + `"}`, "weights"}, // no server weights: never a download
		{`{"input":"` + archive + `","weights":"` + npyID + `"}`, "weights"},
		{`{"input":"` + archive + `","weights":"/etc/weights.pth"}`, "weights"},
		{`{"input":"` + archive + `","weights":"0123456789abcdef0123456789abcdef.pth"}`, "weights"},
	} {
		_, err := s.Submit(ctx, "features", []byte(c.body))
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a field error naming %s", c.body, err, c.field)
		}
	}
}

// A .zip upload is a folder inside the job's file system, and nothing in
// it reaches outside; an entry larger than the limit is refused before
// anything is decompressed.
func TestJobFSZip(t *testing.T) {
	s := newTestService(t, nil, Config{})
	id := upload(t, s, "a.zip", zipOf(t, map[string][]byte{"d/x.txt": []byte("hello"), "../evil.txt": []byte("x")}))
	fsys := newJobFS(s.fsys)
	defer fsys.Close()
	if b, err := readFile(fsys, id+"/d/x.txt"); err != nil || string(b) != "hello" {
		t.Errorf("read inside the archive: %q, %v", b, err)
	}
	for _, bad := range []string{id + "/../" + id, id + "/../../etc/passwd", "/" + id, id + "/missing"} {
		if _, err := fsys.Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
	entries, err := readDir(fsys, id)
	if err != nil || !strings.Contains(strings.Join(entries, ","), "d") {
		t.Errorf("ReadDir of the archive: %v, %v", entries, err)
	}

	// A declared size over the limit.
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	hdr := &zip.FileHeader{Name: "big.png", Method: zip.Store}
	hdr.UncompressedSize64 = maxZipEntry + 1
	zw.CreateRaw(hdr)
	zw.Close()
	big := upload(t, s, "big.zip", b.Bytes())
	if _, err := fsys.Open(big + "/big.png"); fault.Classify(err) != fault.KindInput || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("oversized entry: %v", err)
	}
}

func readFile(fsys *jobFS, name string) ([]byte, error) { return fs.ReadFile(fsys, name) }

func readDir(fsys *jobFS, name string) ([]string, error) {
	es, err := fs.ReadDir(fsys, name)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out, err
}

// The jobs that took feature files and now take folders of images (.zip
// uploads) follow the weights rule of features: an uploaded .pth or the
// server's file, never a host path nor a download.
func TestImageJobsWeightsRule(t *testing.T) {
	s := newTestService(t, nil, Config{})
	ctx := context.Background()
	archive := upload(t, s, "images.zip", zipOf(t, map[string][]byte{"a.png": {1}}))
	npyID := upload(t, s, "x.npy", []byte{1, 2})
	for _, c := range []struct{ kind, body, field string }{
		{"compare", `{"real":"` + archive + `","fake":"` + npyID + `"}`, "weights"},
		{"compare", `{"real":"` + archive + `","fake":"` + npyID + `","weights":"/etc/weights.pth"}`, "weights"},
		{"stats", `{"in":"` + archive + `","weights":"` + npyID + `"}`, "weights"},
		{"is", `{"images":"` + archive + `"}`, "weights"},
		{"select", `{"pools":["` + archive + `","` + npyID + `"],"ref":"` + npyID + `"}`, "weights"},
	} {
		_, err := s.Submit(ctx, c.kind, []byte(c.body))
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s %s: %v, want a field error naming %s", c.kind, c.body, err, c.field)
		}
	}
}
