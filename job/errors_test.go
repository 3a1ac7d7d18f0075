package job

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/tensor/membudget"
	"github.com/genlens/genlens/internal/tensor/par"
)

func TestClassify(t *testing.T) {
	panicErr := par.For(context.Background(), 1, 1, func(context.Context, int) error { panic("bug") })
	tests := []struct {
		err    error
		kind   fault.Kind
		exit   int
		status int
	}{
		{fault.Fieldf("chunk_size", "{chunk_size} %d: want at least 2", 1), fault.KindField, 2, 400},
		{fmt.Errorf("reading: %w", &fault.InputError{File: "x.npy", Msg: "bad"}), fault.KindInput, 2, 422},
		{context.Canceled, fault.KindCanceled, 130, 499},
		{fmt.Errorf("fit: %w", context.DeadlineExceeded), fault.KindCanceled, 130, 499},
		{errors.New("disk full"), fault.KindInternal, 1, 500},
		{panicErr, fault.KindInternal, 1, 500},
		{fmt.Errorf("x.npy: %w", &membudget.Error{What: "m", Rows: 9, Cols: 9, Count: 1, Bytes: 648, Limit: 8}), fault.KindInput, 2, 422},
	}
	for _, tt := range tests {
		k := fault.Classify(tt.err)
		if k != tt.kind || k.ExitCode() != tt.exit || k.HTTPStatus() != tt.status {
			t.Errorf("%v: kind %v exit %d status %d; want %v %d %d", tt.err, k, k.ExitCode(), k.HTTPStatus(), tt.kind, tt.exit, tt.status)
		}
	}
}

func TestFieldErrorRender(t *testing.T) {
	e := fault.Fieldf("gamma", "{gamma} applies only to the rbf kernel, not {kernel} %s", "cs")
	if got, want := e.Error(), "gamma applies only to the rbf kernel, not kernel cs"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	upper := func(f string) string { return strings.ToUpper(f) }
	if got, want := e.Render(upper), "GAMMA applies only to the rbf kernel, not KERNEL cs"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}
