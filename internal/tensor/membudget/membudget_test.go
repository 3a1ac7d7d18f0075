package membudget

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	defer SetLimit(SetLimit(1 << 30)) // 1 GiB
	for _, c := range []struct {
		name              string
		count, rows, cols int
		want              int64 // bytes of the error, 0: fits
	}{
		{"empty", 1, 0, 0, 0},
		{"at the limit", 1, 1 << 14, 1 << 13, 0}, // 2^27 float64 = 1 GiB
		{"one element over", 1, 1<<27 + 1, 1, 8<<27 + 8},
		{"2 x 30000 features' covariance", 1, 30000, 30000, 7_200_000_000},
		{"CKA of 60000 rows, two Grams", 2, 60000, 60000, 57_600_000_000},
		{"count counts", 8, 1 << 12, 1 << 12, 0}, // 8 * 2^24 * 8 = 2^30: fits
		{"count over", 9, 1 << 12, 1 << 12, 9 << 27},
		{"overflow saturates", 1, math.MaxInt, math.MaxInt, math.MaxInt64},
		{"negative is empty", 1, -5, 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check("the matrix", c.count, c.rows, c.cols)
			want := c.want
			if want == 0 {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			var be *Error
			if !errors.As(err, &be) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if be.Bytes != want || be.Limit != 1<<30 {
				t.Errorf("Bytes, Limit = %d, %d; want %d, %d", be.Bytes, be.Limit, want, 1<<30)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	defer SetLimit(SetLimit(4 << 30))
	err := Check("the covariance of the features", 1, 30000, 30000)
	if err == nil {
		t.Fatal("no error")
	}
	want := "the covariance of the features: a 30000 × 30000 matrix takes 6.7 GiB, over the matrix memory budget of 4 GiB; use fewer rows or dimensions, or raise matrix_budget_mb (MiB) on a machine with the memory"
	if err.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", err.Error(), want)
	}
	flag := err.(*Error).Render(func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") })
	if !strings.Contains(flag, "raise --matrix-budget-mb (MiB)") {
		t.Errorf("Render = %q, want the flag spelled", flag)
	}
	err = Check("the Gram matrices", 2, 60000, 60000)
	if !strings.Contains(err.Error(), "the Gram matrices: 2 matrices of 60000 × 60000 take 53.6 GiB") {
		t.Errorf("Error() = %q", err.Error())
	}
	err = CheckBytes("the pixel CKA matrices", 16384, 16384, 9<<30)
	if !strings.Contains(err.Error(), "the pixel CKA matrices: matrices of 16384 × 16384 take 9 GiB") {
		t.Errorf("CheckBytes: %q", err.Error())
	}
}

func TestLimit(t *testing.T) {
	prev := SetLimit(0)
	defer SetLimit(prev)
	d := DefaultLimit()
	if d < minDefault || d > MaxDefault {
		t.Errorf("DefaultLimit = %d, want within [%d, %d]", d, minDefault, MaxDefault)
	}
	if Limit() != d {
		t.Errorf("Limit() = %d, want the default %d", Limit(), d)
	}
	if old := SetLimit(123 << 20); old != 0 {
		t.Errorf("SetLimit returned %d, want 0 (the default was in use)", old)
	}
	if Limit() != 123<<20 {
		t.Errorf("Limit() = %d after SetLimit(123 MiB)", Limit())
	}
	SetLimit(-1)
	if Limit() != d {
		t.Errorf("SetLimit(-1) did not restore the default")
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{512, "512 bytes"}, {12 << 10, "12 KiB"}, {1000 << 20, "1000 MiB"}, {2831155200, "2.6 GiB"}, {4 << 30, "4 GiB"}, {7_200_000_000, "6.7 GiB"}} {
		if got := FormatBytes(c.n); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
