// Package membudget bounds the memory of the matrices whose size an input
// decides: the d × d covariance of d features, the n × n Gram matrix of n
// examples, the pairwise distances of a sample. Such a matrix grows with
// the square of a number read from a file, so a small file (2 rows of
// 30,000 features, 480 KB) can ask for gigabytes (a 7.2 GB covariance)
// and the process dies allocating it. Every such allocation first asks
// Check (or CheckBytes) whether it fits the budget; a matrix that does not
// is refused with an *Error that names its size, the budget, and the
// setting that raises it.
//
// The budget is one per process: SetLimit sets it (the command line's
// and the service's {matrix_budget_mb}); its default is DefaultLimit.
// It bounds each allocation: the estimators hold a few such matrices at
// once, so the budget is a fraction of the memory. Their sum over the
// jobs and requests a process runs at once is bounded too: every check
// also admits the bytes only beside what the process's heap holds, what
// Reserve promised to work in flight and what the checks just before it
// admitted and the heap does not show yet (the test and the promise made
// under one lock, so that two checks at once cannot both take the same
// room), within ProcessLimit (three
// quarters of the memory the process may use); work that does not fit
// now is refused with a *BusyError, which the service answers with 503.
//
// A service's request bodies are bounded the same way before they are
// decoded (Bodies): a JSON body decodes into many times its size, so the
// bytes of the bodies in flight are bounded, and a body is read only
// once they leave room for it.
package membudget
