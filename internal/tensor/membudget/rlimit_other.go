//go:build !unix

package membudget

func addressSpaceLimit() int64 { return 0 }
