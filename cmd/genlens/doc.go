// Command genlens evaluates generative models (and deployed regression
// models) from their samples when labels are scarce:
//
//	entropy, decompose, correlate   kernel entropy and kernel-score decompositions (package kscore)
//	stats, compare, is, select      FID, KID, MMD², CMS, Inception Score, online selection (frechet, online)
//	disentangle, cka                pixel-cluster diagnostics of image generators (disentangle)
//	hallucination                   posterior hallucination rate of in-context learning (hallucination)
//	mse                             one-step MSE estimation and monitoring in production (checkmodel, monitor)
//	demo                            an end-to-end tour on data generated in code
//
// Each subcommand is a thin layer over its package: it parses flags,
// reads and validates files (package dataio), calls the package, and
// prints a table or, with --json, one JSON document whose keys are a
// stable contract. Bad input exits with code 2 and one line naming the
// file, row and field; runtime failures exit with code 1.
package main
