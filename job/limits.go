package job

import (
	"time"

	"github.com/genlens/genlens/fault"
)

// Upper bounds on the size-like fields of requests. A count, a batch size
// or a concurrency in a request sizes an allocation or a set of
// goroutines, so an absurd value (2^40) must be refused as a bad field,
// never reach make. Every bound is far above real use (the defaults and
// the papers' settings are noted beside each); TestEverySizeFieldIsBounded
// fails on a numeric or list field of a request without one.
const (
	// MaxListLen bounds a list of files or names in a request (pools,
	// models, generated sets, feature columns): real runs list a few to
	// a few hundred.
	MaxListLen = 10_000
	// MaxImageBatch bounds the images decoded and run through a network
	// together (pytorch-fid runs 50); each image holds about 1 MB of
	// pixels and several of activations.
	MaxImageBatch = 1024
	// MaxWorkers bounds goroutines and tasks in flight (a
	// request's workers or concurrency; 0 or the default is one per CPU).
	MaxWorkers = 1024
)

// Limit is one size-like field's value and its upper bound.
type Limit struct {
	field  string
	n, max int64
}

// Lim returns the limit of an int field.
func Lim(field string, n, max int) Limit { return Limit{field, int64(n), int64(max)} }

// CheckLimits returns a FieldError naming the first field above its
// bound, prefixed with the command's name when cmd is not "".
func CheckLimits(cmd string, ls ...Limit) error {
	if cmd != "" {
		cmd += ": "
	}
	for _, l := range ls {
		if l.n > l.max {
			return fault.Fieldf(l.field, "%s{%s} %d: at most %d", cmd, l.field, l.n, l.max)
		}
	}
	return nil
}

// CheckTimeout bounds a duration field.
func CheckTimeout(field string, d, max time.Duration) error {
	if d > max {
		return fault.Fieldf(field, "{%s} %v: at most %v", field, d, max)
	}
	return nil
}
