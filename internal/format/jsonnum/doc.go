// Package jsonnum holds Num, the float64 of genlens's JSON documents
// (job results, the service's monitors): NaN and ±Inf, which JSON cannot
// spell, are written as null, an undefined estimate.
package jsonnum
