package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/docgen"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/cli.md and docs/configuration.md from the code")

// The references in docs/ are the code's: the commands' help and the
// configuration's keys. Regenerate them with 'task docs'.
func TestReferencesAreCurrent(t *testing.T) {
	// The defaults that depend on where the docs are made read as a
	// person's would.
	t.Setenv("HOME", "/home/pi")
	for _, env := range []string{"XDG_DATA_HOME", "NATS_URL", "LUMEN_MODEL", "OPENAI_BASE_URL"} {
		t.Setenv(env, "")
	}
	root := newRoot(strings.NewReader(""), io.Discard, io.Discard)
	up, _, err := root.Find([]string{"up"})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := docgen.Keys(daemon.DefaultConfig(""), up.Flags(), daemon.FlagKeys())
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]byte{
		"../../docs/cli.md":           docgen.CLI(root),
		"../../docs/configuration.md": docgen.Config("Configuration: lumen.yaml", `lumen up reads lumen.yaml in its --data directory (or the file --config names); a flag given on the command line wins over the file's key. Every key, the flag that sets it, and its default (none shown: the built-in one the text gives, or off):`, keys),
	} {
		if *updateDocs {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale (or missing: %v): run 'go run github.com/go-task/task/v3/cmd/task@v3.45.4 docs'", file, err)
		}
	}
}
