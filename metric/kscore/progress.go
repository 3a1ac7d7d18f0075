package kscore

import "context"

// progressKey is the context key of WithProgress.
type progressKey struct{}

// WithProgress returns a context that carries a progress callback for the
// long computations of this package (DecomposeConditional,
// CovarianceMatrix): they call fn(done, total) as their kernel sums
// advance, done counting up to total. As with net/http/httptrace, the
// hook travels in the context so that the functions' signatures, and every
// caller that does not watch progress, stay as they are. fn is called
// from one goroutine at a time.
func WithProgress(ctx context.Context, fn func(done, total int)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// progressOf returns the callback of ctx, or a no-op.
func progressOf(ctx context.Context) func(done, total int) {
	if fn, ok := ctx.Value(progressKey{}).(func(done, total int)); ok && fn != nil {
		return fn
	}
	return func(int, int) {}
}

// withoutProgress hides the callback of ctx from inner calls whose
// progress an outer loop reports.
func withoutProgress(ctx context.Context) context.Context {
	return context.WithValue(ctx, progressKey{}, (func(int, int))(nil))
}
