// Package msejob holds the commands that monitor a deployed model's error
// without labels: mse fit (the error model from a labelled reference),
// mse estimate (the error of production chunks, thresholds and alerts,
// through monitor.Run) and mse bench (the estimators compared on
// benchmark data).
//
// Each command is a function over a job.Env and a typed request, as
// package job describes; Commands lists them for job/commands.
package msejob
