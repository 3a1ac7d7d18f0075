package main

import "github.com/genlens/genlens/job/llmjob"

// The JSON documents of entropy, as main_test.go's tests decode them: the
// types moved to the job layer.
type (
	entropyOutput = llmjob.EntropyResult
	entropyItem   = llmjob.EntropyItem
)
