package main

import (
	"os"
	"testing"

	"genlens/inception"
)

// TestMain points genlens's cache at a temporary directory, so that the
// tests never read features a user's earlier runs cached, nor leave any.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "genlens-cache-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv(inception.CacheEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
