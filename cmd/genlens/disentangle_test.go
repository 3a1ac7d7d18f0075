package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/internal/demo/imagesynth"
	"github.com/genlens/genlens/metric/disentangle"
)

// faceFiles writes 16x16 synthetic faces as 8-bit values (N, 16, 16):
// train, test and two generated sets (the second with its mouth blanked).
func faceFiles(t *testing.T, dir string) (train, test, g1, g2 string, sets [4]*mat.Dense) {
	t.Helper()
	r := rand.New(rand.NewPCG(42, 1))
	const s = 16
	mouth := imagesynth.RegionMask(imagesynth.FaceRegions(s, s), imagesynth.Mouth)
	sets = [4]*mat.Dense{
		imagesynth.Faces(r, 150, s, s),
		imagesynth.Faces(r, 100, s, s),
		imagesynth.Faces(r, 100, s, s),
		imagesynth.Fill(imagesynth.Faces(r, 100, s, s), 1, mouth, 1),
	}
	var paths [4]string
	for i, name := range []string{"train.npy", "test.npy", "epoch_1.npy", "epoch_2.npy"} {
		x := sets[i]
		n, _ := x.Dims()
		data := make([]float64, len(x.RawMatrix().Data))
		for j, v := range x.RawMatrix().Data {
			data[j] = math.Round((v + 1) * 127.5) // to 0..255
			x.RawMatrix().Data[j] = data[j]/127.5 - 1
		}
		paths[i] = writeArray(t, dir, name, []int{n, s, s}, data)
	}
	return paths[0], paths[1], paths[2], paths[3], sets
}

func TestDisentangleJSONContract(t *testing.T) {
	dir := t.TempDir()
	train, test, g1, g2, sets := faceFiles(t, dir)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := cli(t, "disentangle", "--train", train, "--test", test, "--generated", g1, g2,
		"--names", "early,late", "--cka-batch", "50", "--cms-batch", "50", "--json", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"cka_between", "cka_within", "clusters", "gamma", "height", "labels", "sets", "width"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	var got struct {
		Gamma      float64     `json:"gamma"`
		Height     int         `json:"height"`
		Width      int         `json:"width"`
		Clusters   int         `json:"clusters"`
		Labels     [][]int     `json:"labels"`
		CKAWithin  []float64   `json:"cka_within"`
		CKABetween [][]float64 `json:"cka_between"`
		Sets       []struct {
			Name        string    `json:"name"`
			CMSImage    float64   `json:"cms_image"`
			CMSClusters []float64 `json:"cms_clusters"`
			CMSProduct  float64   `json:"cms_product"`
			MMD2        float64   `json:"mmd2"`
		} `json:"sets"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Height != 16 || got.Width != 16 || got.Clusters != 5 || len(got.Labels) != 16 || len(got.Labels[0]) != 16 ||
		len(got.CKAWithin) != 5 || len(got.CKABetween) != 5 || len(got.Sets) != 2 {
		t.Fatalf("unexpected shape of the output: %s", stdout)
	}
	if got.Sets[0].Name != "early" || got.Sets[1].Name != "late" {
		t.Errorf("names %q, %q", got.Sets[0].Name, got.Sets[1].Name)
	}
	var setKeys []map[string]any
	json.Unmarshal(raw["sets"], &setKeys)
	for k := range setKeys[0] {
		if !slices.Contains([]string{"name", "cms_image", "cms_clusters", "cms_product", "mmd2"}, k) {
			t.Errorf("unexpected set key %q", k)
		}
	}

	// The CLI is the package on the same (scaled) images.
	res, err := disentangle.Analyze(context.Background(), sets[0], sets[1], []*mat.Dense{sets[2], sets[3]}, disentangle.Grid{H: 16, W: 16, C: 1},
		disentangle.Options{CKABatch: 50, CMSBatch: 50})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Gamma-res.Gamma) > 1e-15*res.Gamma {
		t.Errorf("gamma %v, want %v", got.Gamma, res.Gamma)
	}
	for i, s := range got.Sets {
		w := res.Sets[i]
		if math.Abs(s.CMSImage-w.CMSImage) > 1e-12 || math.Abs(s.CMSProduct-w.CMSProduct) > 1e-12 || math.Abs(s.MMD2-w.MMD2) > 1e-12 {
			t.Errorf("set %d: %+v, want %+v", i, s, w)
		}
		for c, v := range s.CMSClusters {
			if math.Abs(v-w.CMSClusters[c]) > 1e-12 {
				t.Errorf("set %d cluster %d: %v, want %v", i, c, v, w.CMSClusters[c])
			}
		}
	}
	for p, c := range res.Labels {
		if got.Labels[p/16][p%16] != c {
			t.Fatalf("label of pixel %d = %d, want %d", p, got.Labels[p/16][p%16], c)
		}
	}
	// The cluster that falls most in the late set (relative to the early
	// set) is mostly mouth, the region blanked there.
	regions := imagesynth.FaceRegions(16, 16)
	worst := 0
	for c := range got.Sets[1].CMSClusters {
		if got.Sets[1].CMSClusters[c]/got.Sets[0].CMSClusters[c] < got.Sets[1].CMSClusters[worst]/got.Sets[0].CMSClusters[worst] {
			worst = c
		}
	}
	inMouth, size := 0, 0
	for p, c := range res.Labels {
		if c == worst {
			size++
			if regions[p] == imagesynth.Mouth {
				inMouth++
			}
		}
	}
	if 2*inMouth < size {
		t.Errorf("cluster %d fell most, but only %d of its %d pixels are mouth", worst, inMouth, size)
	}

	// --out artifacts.
	checkOutputs(t, out, disentangleOutputs)
	cka, err := dataio.ReadArray(filepath.Join(out, "cka_matrix.npy"), dataio.ReadOptions{})
	if err != nil || !slices.Equal(cka.Shape, []int{256, 256}) {
		t.Fatalf("cka_matrix.npy: %v %v", cka, err)
	}
	for p := 0; p < 256; p++ {
		for q := 0; q < 256; q++ {
			if cka.Data[p*256+q] != res.CKA.At(p, q) {
				t.Fatalf("cka_matrix[%d][%d] = %v, want %v", p, q, cka.Data[p*256+q], res.CKA.At(p, q))
			}
		}
	}
	labels, err := dataio.ReadArray(filepath.Join(out, "labels.npy"), dataio.ReadOptions{})
	if err != nil || !slices.Equal(labels.Shape, []int{16, 16}) || labels.Data[37] != float64(res.Labels[37]) {
		t.Errorf("labels.npy: %v %v", labels, err)
	}
	csv, _ := os.ReadFile(filepath.Join(out, "cms.csv"))
	if !strings.HasPrefix(string(csv), "name,cms_image,cms_product,mmd2,cms_cluster_0,") || !strings.Contains(string(csv), "\nlate,") {
		t.Errorf("cms.csv = %q", csv)
	}
	js, _ := os.ReadFile(filepath.Join(out, "disentangle.json"))
	var again map[string]any
	if err := json.Unmarshal(js, &again); err != nil || again["clusters"].(float64) != 5 {
		t.Errorf("disentangle.json: %v", err)
	}

	// Same seed, same output, bit for bit; --shuffle draws other images.
	args := []string{"disentangle", "--train", train, "--test", test, "--generated", g1, "--cka-batch", "50", "--cka-images", "100", "--json"}
	_, a1, _ := cli(t, append(args, "--shuffle", "--seed", "7")...)
	_, a2, _ := cli(t, append(args, "--shuffle", "--seed", "7")...)
	_, a3, _ := cli(t, args...)
	if a1 != a2 || a1 == a3 {
		t.Errorf("--shuffle --seed 7 twice: equal %v; differs from the first images: %v", a1 == a2, a1 != a3)
	}
}

func TestDisentangleTextAndPNG(t *testing.T) {
	dir := t.TempDir()
	train, test, g1, _, sets := faceFiles(t, dir)
	code, text, stderr := cli(t, "disentangle", "--train", train, "--test", test, "--generated", g1, "--cka-batch", "50", "--linkage", "ward")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"images 16x16x1", "cluster map:", "CMS image", "epoch_1", "main cluster"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	// The same images as folders of 8-bit PNG files give the same result.
	folders := make([]string, 3)
	for i, name := range []string{"train", "test", "gen"} {
		folders[i] = filepath.Join(dir, name)
		os.Mkdir(folders[i], 0o755)
		x := sets[i]
		n, _ := x.Dims()
		for k := 0; k < n; k++ {
			img := image.NewGray(image.Rect(0, 0, 16, 16))
			for p, v := range x.RawRowView(k) {
				img.Pix[p] = uint8(math.Round((v + 1) * 127.5))
			}
			var b bytes.Buffer
			png.Encode(&b, img)
			os.WriteFile(filepath.Join(folders[i], name+"_"+string(rune('a'+k/26))+string(rune('a'+k%26))+".png"), b.Bytes(), 0o644)
		}
	}
	args := []string{"--cka-batch", "50", "--json"}
	_, fromNPY, _ := cli(t, append([]string{"disentangle", "--train", train, "--test", test, "--generated", g1, "--names", "g"}, args...)...)
	code, fromPNG, stderr := cli(t, append([]string{"disentangle", "--train", folders[0], "--test", folders[1], "--generated", folders[2], "--names", "g"}, args...)...)
	if code != 0 || fromPNG != fromNPY {
		t.Errorf("PNG folders: exit %d %s\n%s\nwant\n%s", code, stderr, fromPNG, fromNPY)
	}
}

func TestDisentangleBadInput(t *testing.T) {
	dir := t.TempDir()
	train, test, g1, _, _ := faceFiles(t, dir)
	rgb := writeArray(t, dir, "rgb.npy", []int{4, 16, 16, 3}, make([]float64, 4*16*16*3))
	nan := writeFile(t, dir, "nan.csv", "0,1,2,3\n1,NaN,3,4\n")
	wide := writeArray(t, dir, "wide.npy", []int{2, 16, 16}, append(make([]float64, 511), 300))
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	one := writeArray(t, dir, "one.npy", []int{1, 16, 16}, make([]float64, 256))
	same := writeArray(t, dir, "same.npy", []int{5, 16, 16}, make([]float64, 5*256))
	base := []string{"disentangle", "--train", train, "--test", test}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no generated", base, "at least one --generated"},
		{"no train", []string{"disentangle", "--test", test, "--generated", g1}, "--train and --test are required"},
		{"names count", append(base, "--generated", g1, "--names", "a,b"), "2 --names for 1 generated"},
		{"shape mismatch", append(base, "--generated", g1, rgb), "rgb.npy: images are 16x16x3, but " + train},
		{"NaN", append(base, "--generated", nan), "nan.csv"},
		{"range", append(base, "--generated", wide, "--pixel-range", "0,255"), "wide.npy row 2: pixel (15, 15) channel 0: value 300 outside"},
		{"empty folder", append(base, "--generated", empty), "no .png files"},
		{"missing file", append(base, "--generated", filepath.Join(dir, "nope.npy")), "nope.npy"},
		{"gamma", append(base, "--generated", g1, "--gamma", "wide"), "--gamma"},
		{"linkage", append(base, "--generated", g1, "--linkage", "centroid"), "unknown linkage"},
		{"distance", append(base, "--generated", g1, "--distance", "cosine"), "unknown distance"},
		{"too many clusters", append(base, "--generated", g1, "--clusters", "300"), "--clusters 300 for images of 256 pixels"},
		{"cka batch", append(base, "--generated", g1, "--cka-batch", "1"), "--cka-batch"},
		{"shape flag", append(base, "--generated", g1, "--shape", "16"), "shape"},
		{"flag", append(base, "--generated", g1, "--no-such-flag"), "unknown flag"},
		{"one training image", []string{"disentangle", "--train", one, "--test", test, "--generated", g1}, "one.npy: 1 image"},
		{"identical training images", []string{"disentangle", "--train", same, "--test", test, "--generated", g1}, "same.npy: most training images are identical"},
	}
	for _, tc := range tests {
		code, _, stderr := cli(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "goroutine") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line containing %q", tc.name, code, stderr, tc.want)
		}
	}
}

// Ctrl-C (a cancelled context) stops the command with exit 130 and one
// line, and leaves nothing in --out: no output, no temporary file.
func TestInterruptedExit130NoOutput(t *testing.T) {
	dir := t.TempDir()
	train, test, g1, _, _ := faceFiles(t, dir)
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := runContext(ctx, []string{"disentangle", "--train", train, "--test", test, "--generated", g1,
		"--cka-batch", "50", "--cms-batch", "50", "--out", out}, &stdout, &stderr)
	if code != 130 || strings.TrimSpace(stderr.String()) != "genlens: interrupted" {
		t.Fatalf("exit %d, stderr %q; want 130 and one line", code, stderr.String())
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		t.Errorf("interrupted run left %s in --out", e.Name())
	}
}
