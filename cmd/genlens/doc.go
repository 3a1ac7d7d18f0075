// Command genlens evaluates generative models (and deployed regression
// models) from their samples when labels are scarce:
//
//	entropy, decompose, correlate   kernel entropy and kernel-score decompositions (package kscore)
//	stats, compare, fid, is, select FID, KID, MMD², CMS, Inception Score, online selection (frechet, online);
//	                                stats --shards and stats merge split statistics over a cluster job array
//	disentangle, cka                pixel-cluster diagnostics of image generators (disentangle)
//	hallucination                   posterior hallucination rate of in-context learning (hallucination)
//	mse                             one-step MSE estimation and monitoring in production (checkmodel, monitor)
//	serve                           the same jobs and MSE monitors as an HTTP service (server)
//	demo                            an end-to-end tour on data generated in code
//
// Each subcommand is a thin layer over package job, which reads and
// validates the inputs and holds the methods' rules: it turns flags into
// a job request, runs the job (runJob: progress bars and warnings on
// stderr), writes the result's artifacts under --out, and prints a table
// or, with --json, the result as one JSON document whose keys are a
// stable contract. Bad flags or input exit with code 2 and one line
// naming the flag, or the file, row and field; runtime failures exit with
// code 1, an interruption with 130.
package main
