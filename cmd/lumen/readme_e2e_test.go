package main_test

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// The README's first ten minutes work as written: its first block starts
// the light, and every command of the blocks after it succeeds, in order;
// a comment "X → Y" is checked against the light's state after it.
func TestReadmeFirstTenMinutes(t *testing.T) {
	blocks := readmeBlocks(t, "## The first ten minutes")
	if len(blocks) < 2 || len(blocks[0]) != 1 || blocks[0][0] != "lumen up" {
		t.Fatalf("the section's first block is not 'lumen up': %q", blocks)
	}
	// The one flag added: where its data goes, and free ports.
	d := lumentest.Start(t, t.TempDir(), "--http", "127.0.0.1:0")
	if resp, err := http.Get(d.Page(t)); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the page %s: %v %v", d.Page(t), resp, err)
	}
	arrow := regexp.MustCompile(`→ ([a-z_]+)$`)
	ran := 0
	for _, block := range blocks[1:] {
		for _, line := range block {
			cmdline, comment, _ := strings.Cut(line, " #")
			argv := shellWords(t, strings.TrimSpace(cmdline))
			if len(argv) == 0 || argv[0] != "lumen" {
				continue // another program's (nats), checked by its own tests
			}
			out, code := runCLI(t, d.URL, argv[1:]...)
			if code != 0 {
				t.Fatalf("%s: exit %d:\n%s", line, code, out)
			}
			ran++
			if m := arrow.FindStringSubmatch(strings.TrimSpace(comment)); m != nil {
				if got, _ := runCLI(t, d.URL, "state"); strings.TrimSpace(got) != m[1] {
					t.Fatalf("%s: the light is in %q, the README says %s", line, strings.TrimSpace(got), m[1])
				}
			}
		}
	}
	if ran < 8 {
		t.Fatalf("only %d commands ran: is the section read?", ran)
	}
}

// readmeBlocks returns the lines of the ```sh blocks of the README's
// section that starts with heading, each without its trailing spaces.
func readmeBlocks(t *testing.T, heading string) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var blocks [][]string
	var cur []string
	in := false
	for _, line := range strings.Split(section, "\n") {
		switch {
		case line == "```sh":
			in, cur = true, nil
		case line == "```" && in:
			in = false
			blocks = append(blocks, cur)
		case in && strings.TrimSpace(line) != "":
			cur = append(cur, strings.TrimRight(line, " "))
		}
	}
	return blocks
}

// shellWords splits a command line as a shell would, for the quoting
// the README uses: words, '…' and "…".
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case '\'', '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				t.Fatalf("unbalanced quote in %q", s)
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}
