// Package reprjob holds the commands that compare representations given
// as arrays: cka (centred kernel alignment of two representations of the
// same items) and disentangle (how the clusters of generated images'
// representations separate).
//
// Each command is a function over a job.Env and a typed request, as
// package job describes; Commands lists them for job/commands.
package reprjob
