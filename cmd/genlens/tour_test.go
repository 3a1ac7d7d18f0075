package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The files the serve tour of docs/service.md writes in the root of a clone (its
// data files and the SQLite database with its WAL companions) are ignored
// by git, so that following the tour leaves `git status` clean.
func TestServeTourFilesIgnored(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "docs", "service.md"))
	if err != nil {
		t.Fatal(err)
	}
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("it writes ((?:`[^`]+`(?:,\\s+|\\s+and\\s+)?)+)\\s*in the current directory").FindSubmatch(readme)
	if m == nil {
		t.Fatal("the serve tour of docs/service.md no longer says which files it writes")
	}
	files := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(m[1]), -1)
	db := regexp.MustCompile(`data in \./(\S+)`).FindSubmatch(readme)
	if len(files) < 4 || db == nil {
		t.Fatalf("tour files %q, database %q", files, db)
	}
	names := []string{string(db[1]), string(db[1]) + "-wal", string(db[1]) + "-shm"}
	for _, f := range files {
		names = append(names, f[1])
	}
	var patterns []string
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimPrefix(l, "/"))
		}
	}
	for _, name := range names {
		ignored := false
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok {
				ignored = true
			}
		}
		if !ignored {
			t.Errorf("%s, written by the serve tour of docs/service.md, is not in .gitignore", name)
		}
	}
}
