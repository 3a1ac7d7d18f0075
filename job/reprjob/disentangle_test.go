package reprjob

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/genlens/genlens/dataio"
	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/demo/imagesynth"
	"github.com/genlens/genlens/job"
	"github.com/genlens/genlens/job/internal/golden"
)

// npyBytes encodes images (rows of [-1, 1] values) as an (N, H, W) .npy
// file in memory.
func npyBytes(t *testing.T, rows [][]float64, h, w int) []byte {
	t.Helper()
	a := &dataio.Array{Shape: []int{len(rows), h, w}}
	for _, r := range rows {
		a.Data = append(a.Data, r...)
	}
	var b bytes.Buffer
	if err := dataio.EncodeNPY(&b, a); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func faceFS(t *testing.T) fstest.MapFS {
	r := rand.New(rand.NewPCG(3, 4))
	const s = 12
	set := func(n int) []byte {
		x := imagesynth.Faces(r, n, s, s)
		rows := make([][]float64, n)
		for i := range rows {
			rows[i] = x.RawRowView(i)
		}
		return npyBytes(t, rows, s, s)
	}
	return fstest.MapFS{"train.npy": {Data: set(60)}, "test.npy": {Data: set(40)}, "gen/epoch_1.npy": {Data: set(40)}}
}

func TestDisentangleGolden(t *testing.T) {
	req := NewDisentangleRequest()
	req.Train, req.Test, req.Generated = "train.npy", "test.npy", []string{"gen/epoch_1.npy"}
	req.Clusters, req.CKABatch, req.CMSBatch = 3, 30, 20
	var warnings []string
	res, err := Disentangle(context.Background(), job.Env{FS: faceFS(t), Warn: func(m string) { warnings = append(warnings, m) }}, req)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "disentangle", res)
	if res.Sets[0].Name != "epoch_1" {
		t.Errorf("set name %q, want epoch_1", res.Sets[0].Name)
	}
	for _, a := range res.Artifacts() {
		var b bytes.Buffer
		if err := a.Write(&b); err != nil || b.Len() == 0 {
			t.Errorf("artifact %s: %d bytes, %v", a.Name, b.Len(), err)
		}
	}
	t.Log(warnings)
}

func TestDisentangleValidate(t *testing.T) {
	ok := NewDisentangleRequest()
	ok.Train, ok.Test, ok.Generated = "a", "b", []string{"c"}
	for _, tc := range []struct {
		name, field, want string
		edit              func(r *DisentangleRequest)
	}{
		{"no train", "train", "{train} and {test} are required", func(r *DisentangleRequest) { r.Train = "" }},
		{"no generated", "generated", "at least one {generated}", func(r *DisentangleRequest) { r.Generated = nil }},
		{"names", "names", "2 {names} for 1 generated", func(r *DisentangleRequest) { r.Names = []string{"a", "b"} }},
		{"clusters", "clusters", "{clusters} 0", func(r *DisentangleRequest) { r.Clusters = 0 }},
		{"threshold", "threshold", "{threshold} -1", func(r *DisentangleRequest) { r.Threshold = -1 }},
		{"cka batch", "cka_batch", "{cka_batch} 1", func(r *DisentangleRequest) { r.CKABatch = 1 }},
		{"cka images", "cka_images", "{cka_images} 1", func(r *DisentangleRequest) { r.CKAImages = 1 }},
		{"cms batch", "cms_batch", "{cms_batch} 0", func(r *DisentangleRequest) { r.CMSBatch = 0 }},
		{"linkage", "linkage", "unknown linkage", func(r *DisentangleRequest) { r.Linkage = "centroid" }},
		{"distance", "distance", "unknown distance", func(r *DisentangleRequest) { r.Distance = "cosine" }},
		{"gamma", "gamma", "{gamma} \"wide\"", func(r *DisentangleRequest) { r.Gamma = "wide" }},
		{"shape", "shape", "shape", func(r *DisentangleRequest) { r.Shape = "16" }},
		{"pixel range", "pixel_range", "range", func(r *DisentangleRequest) { r.PixelRange = "x" }},
	} {
		r := ok
		tc.edit(&r)
		var fe *fault.FieldError
		if err := r.Validate(); !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Msg, tc.want) {
			t.Errorf("%s: %v, want a FieldError on %s containing %q", tc.name, err, tc.field, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestDisentangleTooLarge: 8 images of 256x256 would need a 34 GB pixel
// CKA matrix: an InputError on the training file with the size and the
// hint to downsample, before anything is allocated.
func TestDisentangleTooLarge(t *testing.T) {
	rows := make([][]float64, 8)
	for i := range rows {
		rows[i] = make([]float64, 256*256)
		rows[i][i] = 1
	}
	big := npyBytes(t, rows, 256, 256)
	fsys := fstest.MapFS{"big.npy": {Data: big}}
	req := NewDisentangleRequest()
	req.Train, req.Test, req.Generated = "big.npy", "big.npy", []string{"big.npy"}
	_, err := Disentangle(context.Background(), job.Env{FS: fsys}, req)
	var ie *fault.InputError
	if !errors.As(err, &ie) || ie.File != "big.npy" || !strings.Contains(err.Error(), "32.0 GB") || !strings.Contains(err.Error(), "downsample") {
		t.Fatalf("err = %v, want an InputError on big.npy naming the 32 GB matrix and downsampling", err)
	}
}

func TestCKAGolden(t *testing.T) {
	fsys := fstest.MapFS{
		"x.csv": {Data: []byte("1,2\n2,1\n3,5\n4,4\n5,0\n")},
		"y.csv": {Data: []byte("1\n3\n2\n5\n4\n")},
	}
	for _, tc := range []struct {
		name string
		edit func(r *CKARequest)
	}{
		{"cka_linear", func(r *CKARequest) {}},
		{"cka_rbf_debiased", func(r *CKARequest) { r.Kernel, r.Threshold, r.Debiased = "rbf", 0.8, true }},
	} {
		req := NewCKARequest()
		req.X, req.Y = "x.csv", "y.csv"
		tc.edit(&req)
		res, err := CKA(context.Background(), job.Env{FS: fsys}, req)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, tc.name, res)
	}
}

func TestCKAValidate(t *testing.T) {
	for _, tc := range []struct {
		req   CKARequest
		field string
	}{
		{CKARequest{Y: "y", Kernel: "linear"}, "x"},
		{CKARequest{X: "x", Y: "y", Kernel: "poly"}, "kernel"},
		{CKARequest{X: "x", Y: "y", Kernel: "rbf"}, "threshold"},
	} {
		var fe *fault.FieldError
		if err := tc.req.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want a FieldError on %s", tc.req, err, tc.field)
		}
	}
}
