package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every 'lumen …' command a sentence of Lumen's code names exists in the
// CLI, with arguments it takes (issue 26, item 6): a message must not
// send the user to a command that is not there.
func TestMentionedCommandsExist(t *testing.T) {
	root := newRoot(strings.NewReader(""), io.Discard, io.Discard)
	mention := regexp.MustCompile(`'lumen ([^']+)'`)
	word := regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "../.." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range mention.FindAllStringSubmatch(s, -1) {
				var words []string
				for _, w := range strings.Fields(m[1]) {
					if !word.MatchString(w) {
						break
					}
					words = append(words, w)
				}
				checked++
				cmd, rest, err := root.Find(words)
				if err == nil && len(rest) > 0 && cmd.Args != nil {
					err = cmd.Args(cmd, rest)
				}
				if err != nil || cmd == root {
					t.Errorf("%s: %q names a command the CLI does not have: %v", fset.Position(lit.Pos()), m[0], err)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d mentions of 'lumen …' found: is the walk reading the code?", checked)
	}
}
