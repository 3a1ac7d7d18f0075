package job

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/fstest"
)

// Over-dispersed generators: every bonus form dwarfs the FID gaps at this
// budget, and select says so; a tight bonus scale makes the warning go.
// An unknown --fid-bonus is a field error.
func TestSelectBonusWarning(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	pool := func(scale float64) []byte {
		var b strings.Builder
		for i := 0; i < 300; i++ {
			for j := 0; j < 6; j++ {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%g", scale*r.NormFloat64())
			}
			b.WriteByte('\n')
		}
		return []byte(b.String())
	}
	fsys := fstest.MapFS{"ref.csv": {Data: pool(1)}, "a.csv": {Data: pool(1.6)}, "b.csv": {Data: pool(1.8)}, "c.csv": {Data: pool(2)}}
	for _, form := range []string{"paper", "code2024", "fducb2025"} {
		req := NewSelectRequest()
		req.Ref, req.Pools, req.Steps, req.Trials, req.FIDBonus = "ref.csv", []string{"a.csv", "b.csv", "c.csv"}, 60, 1, form
		var warnings []string
		env := Env{FS: fsys, Warn: func(s string) { warnings = append(warnings, s) }}
		if _, err := Select(context.Background(), env, req); err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "exceeds the spread of the empirical FIDs") || !strings.Contains(warnings[0], form) {
			t.Errorf("%s: warnings %q", form, warnings)
		}
		warnings = nil
		req.BonusScale = 1e-9
		if _, err := Select(context.Background(), env, req); err != nil || len(warnings) != 0 {
			t.Errorf("%s at bonus scale 1e-9: %v, warnings %q", form, err, warnings)
		}
	}
	req := NewSelectRequest()
	req.Ref, req.Pools, req.FIDBonus = "ref.csv", []string{"a.csv", "b.csv"}, "2023"
	var fe *FieldError
	if _, err := Select(context.Background(), Env{FS: fsys}, req); !errors.As(err, &fe) || fe.Field != "fid_bonus" {
		t.Errorf("fid_bonus 2023: %v", err)
	}
	req.FIDBonus, req.TruncationRatio = "paper", -1
	if err := req.Validate(); !errors.As(err, &fe) || fe.Field != "truncation_ratio" {
		t.Errorf("truncation_ratio -1: %v", err)
	}
}
