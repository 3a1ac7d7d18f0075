// Package imagejob holds the commands that measure generated images
// against real ones: features (a folder's embeddings), stats and stats
// merge (the Fréchet statistics of a set, whole or by shards), compare
// (FID, KID, precision/recall/density/coverage, Vendi, CMMD, ...), is (the
// Inception Score) and select (choosing among generators), with the
// feature extraction they share (Inception or a ViT, through package
// features).
//
// Each command is a function over a job.Env and a typed request, as
// package job describes; Commands lists them for job/commands.
package imagejob
