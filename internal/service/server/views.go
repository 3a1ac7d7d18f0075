package server

import "time"

// JobView is a job as the dashboard lists it; the job runner (jobs.go)
// provides them through dashboardJobs, newest first.
type JobView struct {
	ID       string
	Kind     string
	Status   string // queued, running, succeeded, failed, canceled
	Done     int    // progress: Done of Total steps of the current stage
	Total    int
	Error    string
	Created  time.Time
	Finished time.Time  // zero while queued or running
	Result   string     // a one-line summary of the result, or ""
	Links    []ViewLink // result JSON, artifacts
}

// SelectionView is an online selection as the dashboard lists it
// (selections.go provides them through dashboardSelections).
type SelectionView struct {
	ID         string
	Name       string
	Algorithm  string // fid-ucb, is-ucb, ...
	Next       string // the generator to sample now
	Generators []GeneratorView
}

// GeneratorView is one arm of an online selection.
type GeneratorView struct {
	Name     string
	Picks    int
	Estimate float64 // the current estimate of its score (NaN when none)
	Bound    float64 // the optimistic bound the algorithm ranks by
}

// ViewLink is a link on the dashboard.
type ViewLink struct {
	Name string
	URL  string
}
