// Package jobrun runs genlens jobs (package job) for a service: it decodes
// a job's request strictly, validates it, runs it on a bounded queue of
// in-process workers with a cancelable context, and keeps every job's
// status, progress, result, error and artifacts in a Store, so that the
// web tier holds no state and several replicas can share one database.
//
// # Kinds
//
// The kinds a Service runs are the entries of commands.All (Kinds lists
// their slugs, "mse-fit" for the command "mse fit"): Submit decodes a
// request's JSON over the entry's defaults, applies the server's policy
// for the kind, calls Validate, checks the uploads the entry declares as
// inputs and applies the weights rule to a kind that reads folders of
// images. A new command in commands.All is a new kind here, with no edit
// in this package unless the server needs a policy for it.
//
// # Store
//
// Store (an alias of records.Store) is the persistence contract. Package
// store implements it in SQL (SQLite and Postgres); MemStore implements
// it in memory for tests and for a single process that needs no
// durability. Every method is safe for concurrent use. Timestamps are
// given by the caller (the Service's clock), so that a Store needs no
// clock of its own and tests are deterministic. records/storetest checks
// an implementation against the contract.
//
// A job moves through
//
//	queued ──ClaimJob──▶ running ──FinishJob──▶ succeeded | failed | canceled
//	   │                    │
//	   └──CancelJob──▶ canceled   (CancelJob on a running job only sets
//	                               CancelRequested; its worker stops and
//	                               finishes it as canceled)
//
// and a running job whose worker stopped sending heartbeats (its process
// died) is failed by FailStale. A worker identifies itself by a string
// (the replica's id and the worker's number); only the worker that
// claimed a job may touch or finish it.
//
// # Workers
//
// A Service runs Config.Workers workers (Start starts them, Close stops
// them). Submit stores a queued job and wakes a worker; each worker
// claims the oldest queued job, runs it, and
// sends a heartbeat with its progress about once a second, which is also
// how it learns that a DELETE on another replica asked it to stop. A
// panic inside a job becomes a failed job with an internal error; the
// process survives it.
//
// # Inputs and outbound calls
//
// A request names its input files by upload id (Service.SaveUpload):
// content ids under the data directory's uploads folder, which is all a
// job's file system holds (opened through os.Root, so neither ".." nor a
// symbolic link leads out); a .zip upload is also a folder, for features.
// Secrets (API keys) come from the server's configuration by the name a
// request gives, never from the request; an outbound LLM base URL must lie
// under one the server allows, and so must every redirect.
//
// # Retention
//
// With Config.RetainJobs or RetainUploads set, Service.Sweep deletes
// finished jobs with their artifacts, and uploads no remaining job names,
// once they are older than the period (Store.DeleteJobs, DeleteUploads),
// then removes the files whose records are gone: records first, so that
// none points at a removed file, and a file left by a crash is removed
// by the next sweep. It runs at Start and every tenth of the shorter
// period (at most hourly); its deletions are idempotent, so replicas
// sweep one database at once.
//
// # Selections
//
// Online generator selection (Hu, Leung and Farnia, "An Optimism-based
// Approach to Online Evaluation of Generative Models", arXiv 2024) is a
// service too: a selection's configuration and the ordered log of the
// batches posted to it are stored, and any replica rebuilds the exact
// state of the online package's selector by replaying the batches it has
// not yet seen, so a restart or another replica continues bit for bit.
package jobrun
