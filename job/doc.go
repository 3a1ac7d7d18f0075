// Package job is the one contract behind every genlens command: a plain
// function per job (llmjob.Entropy, imagejob.Compare, msejob.Estimate,
// ...) that takes a context, an Env and a typed request, and returns a
// typed result. This package holds what every command shares: Env, the
// error kinds, Messages, Artifact, the size limits, CSVOptions, the
// ModelCache, and Command with Spec and Define, by which each domain
// package (imagejob, llmjob, msejob, reprjob) lists its commands for
// job/commands to assemble.
//
// The command line and the HTTP service are thin transports over it. A
// request's JSON field names are the command's flag names with '-'
// replaced by '_' ("chunk_size" for --chunk-size); each request has a
// Validate method that the transports call before any work. A result
// marshals to exactly the JSON that `genlens <command> --json` prints, and
// its artifacts (CSV tables, PNG charts, NPY arrays) are rendered from the
// result into any io.Writer, so the command line writes them to --out and
// the service stores them.
//
// What differs between transports travels in Env: where inputs come from
// (the host's files, a server's uploads, an fstest.MapFS in tests), a
// progress callback, warnings, and secrets such as API keys, which never
// travel inside a request.
//
// # Errors
//
// Every error a job returns falls into one of four kinds (see Classify),
// mapped once to exit codes and HTTP statuses:
//
//	KindField     a bad request field (a bad flag)       exit 2, HTTP 400
//	KindInput     a bad input file (*fault.InputError)  exit 2, HTTP 422
//	KindCanceled  the context was cancelled              exit 130, HTTP 499
//	KindInternal  anything else                          exit 1, HTTP 500
//
// Rows are numbered from 1 in every message, as people count lines of a
// file (an *fault.InputError's Line); indices inside arrays (samples[2],
// column 3) are 0-based, as in the NumPy and Python code users write.
package job
