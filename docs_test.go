package lumen_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/internal/docgen"
)

// mdLink is a Markdown link or image: its target, up to a title.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// Every relative link of the README and the docs reaches a file, and a
// #fragment one of its headings.
func TestDocLinksResolve(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md", "CONTRIBUTING.md", "ARCHITECTURE.md")
	anchors := map[string]map[string]bool{}
	headings := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		a := map[string]bool{}
		f, err := os.Open(file)
		if err == nil {
			defer f.Close()
			seen := map[string]int{}
			fenced := false
			for s := bufio.NewScanner(f); s.Scan(); {
				line := s.Text()
				if strings.HasPrefix(line, "```") {
					fenced = !fenced
				}
				if fenced || !strings.HasPrefix(line, "#") {
					continue
				}
				id := docgen.Anchor(strings.TrimSpace(strings.TrimLeft(line, "#")))
				if n := seen[id]; n > 0 {
					a[id+"-"+strconv.Itoa(n)] = true
				} else {
					a[id] = true
				}
				seen[id]++
			}
		}
		anchors[file] = a
		return a
	}
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		fenced := false
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				fenced = !fenced
			}
			if fenced {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, frag, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: %s: no such file", file, n+1, target)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(dest, ".md") && !headings(dest)[frag] {
					t.Errorf("%s:%d: %s: %s has no heading #%s", file, n+1, target, dest, frag)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d links checked: is the test reading the docs?", checked)
	}
}
