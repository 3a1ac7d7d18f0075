// Package records holds the records of the job service (jobs, their
// artifacts, uploads, online selections) and the Store interface that
// persists them. It is a leaf: jobrun runs jobs over a Store, and package
// store implements one on SQLite and Postgres, without either importing
// the other.
package records

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Status is the state of a job.
type Status string

// The states of a job; the last three are terminal and never change.
const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
	StatusCanceled  Status = "canceled"
)

// Terminal reports whether s is a final state.
func (s Status) Terminal() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCanceled
}

// Errors a Store returns; implementations wrap or return them as they are,
// callers test with errors.Is.
var (
	// ErrNotFound: no job, artifact, upload or selection has that id.
	ErrNotFound = errors.New("not found")
	// ErrConflict: an id that already exists (CreateJob, CreateSelection),
	// or a selection batch whose Seq is not the next one (another replica
	// appended first; the caller reloads and retries).
	ErrConflict = errors.New("conflict")
	// ErrNotClaimed: Touch or FinishJob on a job that is not running
	// under the given worker any more (FailStale failed it, or it was
	// never claimed by that worker). The worker abandons the job.
	ErrNotClaimed = errors.New("job not claimed by this worker")
)

// Job is one stored job. A Store keeps every field as given and returns
// it unchanged (times at least to the microsecond, in UTC).
type Job struct {
	ID      string          // unique, chosen by the caller (URL-safe, at most 64 bytes)
	Kind    string          // "entropy", "mse-bench", ... (see jobrun.Kinds)
	Request json.RawMessage // the request as posted, already validated
	Status  Status

	Done, Total int // progress of the current stage; 0, 0 until reported

	Result    json.RawMessage // the job's --json result; nil unless succeeded
	ErrorKind string          // job.Kind.String() ("field", "input", "canceled", "internal"); "" unless failed or canceled
	Error     string          // one-line message; "" unless failed or canceled

	CancelRequested bool   // a DELETE arrived while the job was running
	ClaimedBy       string // the worker running or last running it; "" while queued

	Created   time.Time // when it was submitted
	Started   time.Time // when it was claimed; zero while queued
	Heartbeat time.Time // the last Touch (or the claim); zero while queued
	Finished  time.Time // when it reached a terminal state; zero before
}

// Outcome is how a job ended, given to FinishJob.
type Outcome struct {
	Status    Status // StatusSucceeded, StatusFailed or StatusCanceled
	Result    json.RawMessage
	ErrorKind string
	Error     string
}

// Artifact is a file a job produced (a CSV table, a PNG chart, ...).
type Artifact struct {
	JobID       string
	Name        string // a file name without slashes, unique within the job
	ContentType string // e.g. "text/csv; charset=utf-8"
	Data        []byte
}

// ArtifactInfo describes an artifact without its bytes.
type ArtifactInfo struct {
	Name        string
	ContentType string
	Size        int64
}

// Upload is the metadata of an uploaded file. Its bytes live under the
// service's data directory (see jobrun.Uploads), named by ID; the Store keeps
// what describes them.
type Upload struct {
	ID      string // content id: 32 hex digits of the SHA-256 plus the file's extension, e.g. "9f86d081884c7d659a2feaa0c55ad015.npy"
	Name    string // the file name the client gave
	Size    int64
	SHA256  string    // hex
	Created time.Time // the last upload of these bytes (see Store.PutUpload)
}

// Selection is an online selection's configuration. Its state is the
// ordered log of batches (SelectionBatch) posted to it.
type Selection struct {
	ID      string
	Config  json.RawMessage // the validated creation request (see SelectionConfig)
	Seq     int64           // the number of batches appended so far (0 for none)
	Created time.Time
	Updated time.Time // of the last append (Created before any)
}

// SelectionBatch is one batch of sample rows posted to a selection.
type SelectionBatch struct {
	SelectionID string
	Seq         int64 // 1 for the first batch, then 2, 3, ... without gaps
	Generator   int   // index into the selection's generators
	Rows, Cols  int
	Data        []byte // Rows*Cols float64s, little-endian, row-major (exact)
	Created     time.Time
}

// Store is the persistence of the job service. All methods are safe for
// concurrent use from several goroutines and, for a shared database, from
// several processes; the SQL implementations run each method in one
// transaction. Package records/storetest checks an implementation against
// this contract (storetest.Run).
//
// A schema that fits (Postgres spelling; SQLite uses BLOB and INTEGER):
//
//	jobs(id TEXT PRIMARY KEY, kind TEXT, request BYTEA, status TEXT,
//	     done INT, total INT, result BYTEA NULL, error_kind TEXT, error TEXT,
//	     cancel_requested BOOL, claimed_by TEXT, created TIMESTAMPTZ,
//	     started, heartbeat, finished TIMESTAMPTZ NULL)
//	     + INDEX (status, created, id)
//	artifacts(job_id TEXT, name TEXT, content_type TEXT, data BYTEA,
//	     PRIMARY KEY (job_id, name))
//	uploads(id TEXT PRIMARY KEY, name TEXT, size BIGINT, sha256 TEXT, created TIMESTAMPTZ)
//	selections(id TEXT PRIMARY KEY, config BYTEA, seq BIGINT, created, updated TIMESTAMPTZ)
//	selection_batches(selection_id TEXT, seq BIGINT, generator INT, rows INT,
//	     cols INT, data BYTEA, created TIMESTAMPTZ, PRIMARY KEY (selection_id, seq))
//
// Claiming on Postgres:
//
//	UPDATE jobs SET status='running', claimed_by=$1, started=$2, heartbeat=$2
//	WHERE id = (SELECT id FROM jobs WHERE status='queued'
//	            ORDER BY created, id LIMIT 1 FOR UPDATE SKIP LOCKED)
//	RETURNING ...
type Store interface {
	// CreateJob stores j, whose Status is StatusQueued and whose Created
	// is set. An existing ID is ErrConflict.
	CreateJob(ctx context.Context, j Job) error
	// GetJob returns the job with that id, or ErrNotFound.
	GetJob(ctx context.Context, id string) (Job, error)
	// ListJobs returns up to limit jobs (limit <= 0: all), newest Created
	// first, ties by ID.
	ListJobs(ctx context.Context, limit int) ([]Job, error)
	// CountJobs returns how many jobs are in state s (queue depth for
	// StatusQueued).
	CountJobs(ctx context.Context, s Status) (int, error)

	// ClaimJob atomically takes the oldest queued job (by Created, then
	// ID), sets it running with ClaimedBy = worker and Started =
	// Heartbeat = now, and returns it; ok is false when none is queued.
	// No two callers ever claim the same job, even from two processes:
	// on Postgres, SELECT ... FOR UPDATE SKIP LOCKED inside the UPDATE's
	// transaction; on SQLite, one write transaction (BEGIN IMMEDIATE).
	ClaimJob(ctx context.Context, worker string, now time.Time) (j Job, ok bool, err error)
	// Touch records progress done/total and Heartbeat = now on a job
	// running under worker, and reports whether a cancel was requested.
	// A job not running under worker is ErrNotClaimed (ErrNotFound when
	// there is no such job).
	Touch(ctx context.Context, id, worker string, done, total int, now time.Time) (cancelRequested bool, err error)
	// FinishJob moves a job running under worker to o.Status with o's
	// result and error, Finished = now. A job not running under worker is
	// ErrNotClaimed (ErrNotFound when there is no such job), and is left
	// unchanged.
	FinishJob(ctx context.Context, id, worker string, o Outcome, now time.Time) error
	// CancelJob cancels a job: a queued one becomes StatusCanceled at once
	// (ErrorKind "canceled", Error given by msg, Finished = now); a running
	// one gets CancelRequested = true and stays running until its worker
	// finishes it; a terminal one is left as it is. It returns the job as
	// it is afterwards, or ErrNotFound.
	CancelJob(ctx context.Context, id, msg string, now time.Time) (Job, error)
	// FailStale fails every running job whose Heartbeat is before
	// `before`: Status failed, ErrorKind "internal", Error msg, Finished =
	// now. It returns the ids it failed. The queue calls it at start (for
	// a store only one process uses, with before = now: whatever is still
	// running was interrupted) and periodically with before = now - lease.
	FailStale(ctx context.Context, before time.Time, msg string, now time.Time) ([]string, error)

	// PutArtifact stores an artifact, replacing one of the same job and
	// name.
	PutArtifact(ctx context.Context, a Artifact) error
	// GetArtifact returns one artifact with its bytes, or ErrNotFound.
	GetArtifact(ctx context.Context, jobID, name string) (Artifact, error)
	// ListArtifacts returns a job's artifacts by name (none: empty, no
	// error, whether or not the job exists).
	ListArtifacts(ctx context.Context, jobID string) ([]ArtifactInfo, error)

	// PutUpload records an upload. The id is a content id, so recording
	// one that exists is not an error: the first record's Name, Size and
	// SHA256 are kept, and Created becomes the later of the two times
	// (the bytes' last upload, from which retention counts).
	PutUpload(ctx context.Context, u Upload) error
	// GetUpload returns an upload's metadata, or ErrNotFound.
	GetUpload(ctx context.Context, id string) (Upload, error)

	// DeleteJobs deletes, with their artifacts and in one transaction,
	// the terminal jobs (succeeded, failed, canceled) whose Finished is
	// before `before`, and returns their ids in order. Queued and running
	// jobs are never deleted, however old. What is gone already is no
	// error, so that replicas may sweep one database at once: each id is
	// returned by one caller only.
	DeleteJobs(ctx context.Context, before time.Time) ([]string, error)
	// DeleteUploads deletes the upload records created before `before`
	// that no stored job references, and returns their ids in order
	// (each to one caller only, as DeleteJobs). A job references an
	// upload when its Request contains the upload's id anywhere (ids are
	// 128-bit hashes, so a mention is a reference): deliberately
	// conservative, it needs no knowledge of which request fields name
	// files. The files themselves are the caller's (see
	// jobrun.Service.Sweep).
	DeleteUploads(ctx context.Context, before time.Time) ([]string, error)

	// CreateSelection stores s with Seq 0 and Updated = Created; an
	// existing ID is ErrConflict.
	CreateSelection(ctx context.Context, s Selection) error
	// GetSelection returns a selection with its current Seq, or
	// ErrNotFound.
	GetSelection(ctx context.Context, id string) (Selection, error)
	// ListSelections returns every selection, oldest first (ties by ID).
	ListSelections(ctx context.Context) ([]Selection, error)
	// AppendSelectionBatch appends b if b.Seq is the selection's Seq + 1,
	// in one transaction that also sets the selection's Seq = b.Seq and
	// Updated = b.Created; otherwise ErrConflict and nothing changes
	// (in SQL: the primary key (selection_id, seq) plus the check).
	// ErrNotFound when the selection does not exist.
	AppendSelectionBatch(ctx context.Context, b SelectionBatch) error
	// SelectionBatches returns the batches with Seq > after, in Seq
	// order; ErrNotFound when the selection does not exist.
	SelectionBatches(ctx context.Context, id string, after int64) ([]SelectionBatch, error)
}

// LLMRequest is one chat completion proxied to an OpenAI-compatible
// endpoint by `genlens serve --llm-upstream`, with the uncertainty of its
// answer. It holds no key and not the messages, only their hash.
type LLMRequest struct {
	ID           int64
	Time         time.Time
	Model        string
	MessagesHash string // hex SHA-256 of the request's messages (compact JSON)
	Answer       string // the first choice's content ("" when there is none)
	Stream       bool
	Status       int    // the HTTP status returned to the caller
	Score        string // the uncertainty score's name, kernel-entropy, ...
	// Uncertainty is NaN when none was computed (an upstream error, or a
	// failure to sample or score: see Error).
	Uncertainty float64
	Samples     int // samples asked for
	Error       string
	// Seconds of the upstream answer, of drawing the samples, and of the
	// whole request as the proxy served it.
	UpstreamSeconds, SampleSeconds, TotalSeconds float64
}

// LLMQuery selects stored LLM requests.
type LLMQuery struct {
	Since time.Time // only requests at or after Since (zero: all)
	// MinUncertainty, when not NaN, keeps only requests with an
	// uncertainty of at least it (those without one are left out).
	MinUncertainty float64
	// ByUncertainty orders by uncertainty, highest first; else by time,
	// newest first.
	ByUncertainty bool
	Limit         int // at most Limit requests; 0 means 100
}

// ErrMismatch is returned (wrapped) when a part of partial statistics
// belongs to other inputs than the parts already held under its name: a
// different shard count, input listing or provenance.
var ErrMismatch = errors.New("mismatch")

// StatsPart is one part file of sharded statistics, as posted to
// /api/v1/stats/{name}/parts.
type StatsPart struct {
	Name   string
	Shard  int
	Shards int
	// Input is the part's frechet.Part.Key (input, provenance, dimension);
	// parts of one name must agree on it (and on Shards).
	Input   string
	SHA256  string // of Data; an identical part re-sent is a duplicate
	N       int
	Data    []byte // the part file
	Created time.Time
}

// StatsSet summarises the parts held under a name.
type StatsSet struct {
	Name   string
	Shards int
	Input  string
	Have   []int // shard indices held, ascending
	N      int   // rows over the held parts
}
