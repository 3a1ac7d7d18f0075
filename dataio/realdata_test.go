package dataio

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// sharedData returns the directory of the project's shared real data, or
// skips the test when it is absent (the data is never part of the repo).
func sharedData(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GENLENS_SHARED_DATA")
	if dir == "" {
		// The test's working directory is the package directory, so the
		// default ../shared/data (from the project root) is two levels up.
		dir = filepath.Join("..", "..", "shared", "data")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Skipf("shared data directory %s not found; set GENLENS_SHARED_DATA to run this test", dir)
	}
	return dir
}

func TestRealDataRecords(t *testing.T) {
	dir := sharedData(t)
	tests := []struct {
		file    string
		n, m    int
		judged  bool
		firstID string
	}{
		{"triviaqa_llama13b_500x20.jsonl", 500, 20, false, ""},
		{"triviaqa_qwen2.5-7b_1000x10.jsonl", 1000, 10, true, "tc_2"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			recs, err := ReadRecords(filepath.Join(dir, "llm", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tt.n {
				t.Fatalf("%d records, want %d", len(recs), tt.n)
			}
			if tt.firstID != "" && recs[0].ID != tt.firstID {
				t.Errorf("first id %q, want %q", recs[0].ID, tt.firstID)
			}
			nullScores := 0
			for i, r := range recs {
				if len(r.Samples) != tt.m || len(r.Reference) != 1 || r.Line != i+1 || r.ID == "" {
					t.Fatalf("record %d: %d samples, reference %q, line %d, id %q", i, len(r.Samples), r.Reference, r.Line, r.ID)
				}
				if tt.judged != (r.JudgeScores != nil) {
					t.Fatalf("record %d: judge_scores %v", i, r.JudgeScores)
				}
				for _, s := range r.JudgeScores {
					if s == nil {
						nullScores++
					} else if *s < 0 || *s > 100 {
						t.Fatalf("record %d: judge score %v outside 0..100", i, *s)
					}
				}
			}
			t.Logf("%s: %d records, %d null judge scores", tt.file, len(recs), nullScores)
		})
	}
}

func TestRealDataArrays(t *testing.T) {
	dir := sharedData(t)
	tests := []struct {
		file, key string
		shape     []int
		min, max  float64
	}{
		{"images/olivetti_faces_400x64x64_uint8.npy", "", []int{400, 64, 64}, 0, 255},
		{"images/pneumoniamnist.npz", "train_images", []int{3882, 28, 28}, 0, 255},
		{"images/digits.csv.gz", "", []int{1797, 65}, 0, 16},
		{"fixtures/sqrtm_fails_200x200.npz", "", []int{200, 200}, -1e300, 1e300},
		{"fixtures/inception_pool3_one_image.npy", "", []int{1, 1, 1, 2048}, -1e6, 1e6},
		{"fixtures/kornblith_X.csv", "", []int{100, 10}, -10, 10},
		{"regression/mg_scale.csv", "", []int{1385, 7}, -2, 2},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			a, err := ReadArray(filepath.Join(dir, tt.file), ReadOptions{Key: tt.key})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.Shape, tt.shape) {
				t.Fatalf("shape %v, want %v", a.Shape, tt.shape)
			}
			lo, hi := a.Data[0], a.Data[0]
			for _, v := range a.Data {
				lo, hi = min(lo, v), max(hi, v)
			}
			if lo < tt.min || hi > tt.max || lo == hi {
				t.Errorf("values in [%v, %v], want a non-constant range within [%v, %v]", lo, hi, tt.min, tt.max)
			}
		})
	}
	st, err := ReadStack(filepath.Join(dir, "images/olivetti_faces_400x64x64_uint8.npy"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	face := st.Slice(399)
	if !reflect.DeepEqual(face.Shape, []int{64, 64}) {
		t.Errorf("face shape %v", face.Shape)
	}
	keys, err := NPZKeys(filepath.Join(dir, "images/pneumoniamnist.npz"))
	want := []string{"test_images", "test_labels", "train_images", "train_labels", "val_images", "val_labels"}
	if err != nil || !reflect.DeepEqual(keys, want) {
		t.Errorf("NPZKeys = %v, %v", keys, err)
	}
	_, err = ReadArray(filepath.Join(dir, "images/pneumoniamnist.npz"), ReadOptions{})
	wantInputError(t, err, "pneumoniamnist.npz", "6 arrays", "train_images")
}
