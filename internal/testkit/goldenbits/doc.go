// Package goldenbits guards a network's arithmetic version in tests: it
// records the SHA-256 of the exact bits a network computes on fixed
// inputs, beside the version the network declares, and fails a test when
// the bits change while the version stays.
//
// The version keys the feature cache (features.Settings.Numerics). A
// change of kernel, convolution form or summation order moves features
// in their last bits; without a new version, cached features of the old
// build would be read beside fresh ones of the new, and a sharded run
// would no longer equal a single pass bit for bit.
package goldenbits
