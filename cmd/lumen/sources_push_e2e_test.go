package main_test

import (
	"strings"
	"testing"
)

// source add's flags make an internal source, and source ls shows it (its
// behaviour is actors/daemon's TestInternalAndNATSSources).
func TestSourceAddTracksCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	if out, code := runCLI(t, d.URL, "source", "add", "activity", "--tracks", "transitions_today", "--interval", "10s", "--store", "today=result"); code != 0 {
		t.Fatalf("source add --tracks: %d %s", code, out)
	}
	r := mustOK(t, request(t, nc, "lumen.demo.cmd.list_sources", `{}`))
	for _, want := range []string{`"name":"activity"`, `"type":"internal"`, `"tracks":"transitions_today"`, `"interval_ms":10000`, `"store":{"today":"result"}`} {
		if !strings.Contains(string(r.Raw), want) {
			t.Errorf("list_sources has no %s: %s", want, r.Raw)
		}
	}
	if out, _ := runCLI(t, d.URL, "source", "ls"); !strings.Contains(out, "internal every 10s: transitions_today") {
		t.Fatalf("source ls: %s", out)
	}
}
