package fields

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// flagLike matches a command-line flag in a string: "--weights", "--K".
var flagLike = regexp.MustCompile(`(^|[^-\w])--[A-Za-z]`)

// No package but the command line's writes a flag name in a string: the
// layers below it name request fields in braces ("{pools_key}"), which
// each transport spells its own way. demo is exempt: its report lists
// the command lines that reproduce each section.
func TestNoFlagsBelowTheCommandLine(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel != "." && (rel == "cmd" || rel == filepath.Join("internal", "demo") || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && flagLike.MatchString(lit.Value) {
				t.Errorf("%s: a flag in %s; name the request field in braces", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
