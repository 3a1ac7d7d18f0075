package main

import "genlens/job"

// The JSON documents of entropy, as main_test.go's tests decode them: the
// types moved to the job layer.
type (
	entropyOutput = job.EntropyResult
	entropyItem   = job.EntropyItem
)
