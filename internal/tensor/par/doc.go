// Package par runs independent pieces of work on a bounded number of
// goroutines: simulation trials, per-image or per-batch products, fits of
// independent models. It is the one worker pool of genlens, so that every
// fan-out stops when its context is cancelled, turns a panicking worker
// into an error instead of killing the process (a server must survive a
// bug in one job), and keeps OpenBLAS to one thread per call while
// several goroutines call it at once.
//
// Results never depend on the number of workers: each piece of work gets
// its index, and random streams are derived from indices with Mix, not
// from the order in which goroutines happen to run.
package par
