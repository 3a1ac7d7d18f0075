// Package statsvc is the service of sharded statistics: part files of
// `genlens stats --shards K`, posted by many machines under one name,
// kept as they are, and merged when read, in shard order, through
// frechet.TreeMerger, so that the service's statistics are bit for bit
// those of `genlens stats merge`.
//
// Parts are kept by a Store (package store's DB on SQLite or Postgres,
// MemStore in memory); every part of a name shares its shard count and
// its frechet.Part.Key (input listing, provenance, dimension), which the
// store checks in the transaction that adds the part. Package server
// speaks HTTP in front of it.
package statsvc
