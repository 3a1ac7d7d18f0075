// Package llmjob holds the commands that score language models' answers:
// sample (answers drawn from an OpenAI-compatible endpoint), entropy
// (kernel language entropy and the other uncertainty scores of sampled
// answers), and decompose and correlate (kernel scores of predictions).
// The hallucination rate of in-context learning is package icljob's.
//
// Each command is a function over a job.Env and a typed request, as
// package job describes; Commands lists them for job/commands.
package llmjob
