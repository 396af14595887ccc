package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// Every verb a light's sentence names has the CLI command a person types
// in its place (cliWords): a sentence never sends a CLI user to a verb.
func TestNamedVerbsHaveCLIWords(t *testing.T) {
	files, err := filepath.Glob("../../actors/light/machine/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the machine's sources: %v", err)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, v := range messages.Verbs() {
		if !strings.Contains(v, "_") || !regexp.MustCompile(`[(\s]`+v+`[\s).,;:]`).MatchString(src.String()) {
			continue
		}
		if got := inCLIWords("(" + v + ")"); got == "("+v+")" {
			t.Errorf("the light's sentences name %s, which has no CLI words in cliWords", v)
		}
	}
}
