package jobrun

import "github.com/genlens/genlens/records"

// The records of the service and the Store that persists them live in
// package records, which package store implements without importing
// jobrun; these aliases keep their jobrun names.
type (
	Status         = records.Status
	Job            = records.Job
	Outcome        = records.Outcome
	Artifact       = records.Artifact
	ArtifactInfo   = records.ArtifactInfo
	Upload         = records.Upload
	Selection      = records.Selection
	SelectionBatch = records.SelectionBatch
	Store          = records.Store
)

// The states of a job (see records.Status).
const (
	StatusQueued    = records.StatusQueued
	StatusRunning   = records.StatusRunning
	StatusSucceeded = records.StatusSucceeded
	StatusFailed    = records.StatusFailed
	StatusCanceled  = records.StatusCanceled
)

// Errors a Store returns (see records).
var (
	ErrNotFound   = records.ErrNotFound
	ErrConflict   = records.ErrConflict
	ErrNotClaimed = records.ErrNotClaimed
)
