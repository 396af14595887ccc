package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// lumen source add|ls|rm against the real binary: what a user types, the
// exit status and what they read.
func TestSourceCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	cli := func(args ...string) (string, int) { return runCLI(t, d.URL, args...) }

	out, code := cli("source", "add", "clock", "--tool", "get_time", "--args", `{}`, "--interval", "1h",
		"--store", "now=result", "--fires", "clock_updated")
	if code != 0 || !strings.Contains(out, "clock") {
		t.Fatalf("add from flags: %d %s", code, out)
	}
	file := filepath.Join(t.TempDir(), "slow.yaml")
	if err := os.WriteFile(file, []byte("name: slow\ninterval_ms: 7200000\nfetch: {tool: get_time}\nstore: {when: result}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := cli("source", "add", "-f", file); code != 0 {
		t.Fatalf("add -f: %d %s", code, out)
	}
	if out, code := cli("source", "add", "door", "--topic", "home/door", "--store", "who=result.who", "--fires", "door"); code != 0 {
		t.Fatalf("add --topic: %d %s", code, out)
	}
	if out, code := cli("source", "add", "hook", "--token", "a-long-enough-secret-token", "--fires", "hooked"); code != 0 {
		t.Fatalf("add --token: %d %s", code, out)
	}
	out, code = cli("source", "ls")
	for _, want := range []string{"clock", "poll every 1h0m0s: get_time", "store now=result", "fires clock_updated", "slow", "every 2h0m0s",
		"mqtt home/door", "webhook (the daemon serves no HTTP, --http off or its port taken: nothing receives it)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("ls: want %q in: %d %s", want, code, out)
		}
	}
	// A new source runs at once; ls then says when.
	lastRun := regexp.MustCompile(`(?m)^clock .* last run \d+s ago$`)
	lumentest.WaitFor(t, 30*time.Second, "the clock source's first run in source ls", func() bool {
		out, _ := cli("source", "ls")
		return lastRun.MatchString(out)
	})

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--tool", "get_time", "--interval", "1s", "--store", "x=result"}, 1, "below the minimum"},
		{[]string{"--tool", "nope", "--interval", "1h", "--store", "x=result"}, 1, "define it with 'lumen tool define' first"},
		{[]string{"--tool", "get_time", "--interval", "1h", "--store", "x"}, 2, "VAR=PATH"},
		{[]string{"--tool", "get_time", "--interval", "1h", "--store", "x=result", "--args", "{nope"}, 2, "--args is not JSON"},
		{[]string{"-f", file, "--tool", "get_time"}, 2, "drop"},
	} {
		args := append([]string{"source", "add"}, c.args...)
		if c.args[0] != "-f" {
			args = append([]string{"source", "add", "bad"}, c.args...)
		}
		if out, code := cli(args...); code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%v: got %d %s, want exit %d with %q", args, code, out, c.code, c.want)
		}
	}
	// A source of that name is replaced only when asked to.
	if out, code := cli("source", "add", "slow", "--tool", "get_time", "--interval", "3h", "--store", "when=result"); code != 1 || !strings.Contains(out, "light demo has a source named slow already: add --replace to replace it") {
		t.Errorf("add over an existing source: %d %s", code, out)
	}
	if out, code := cli("source", "add", "slow", "--tool", "get_time", "--interval", "3h", "--store", "when=result", "--replace"); code != 0 {
		t.Errorf("add --replace: %d %s", code, out)
	}
	if out, code := cli("source", "add", "--tool", "get_time"); code != 2 || !strings.Contains(out, "name the source") {
		t.Errorf("add without a name: %d %s", code, out)
	}

	if out, code := cli("source", "rm", "clock"); code != 0 {
		t.Fatalf("rm: %d %s", code, out)
	}
	if out, _ := cli("source", "ls", "--json"); strings.Contains(out, `"clock"`) || !strings.Contains(out, `"slow"`) {
		t.Fatalf("ls after rm: %s", out)
	}
	if out, code := cli("source", "rm", "clock"); code != 1 || !strings.Contains(out, "does not exist") {
		t.Fatalf("rm twice: %d %s", code, out)
	}
	for _, sub := range []string{"add", "ls", "rm"} {
		if out, code := cli("source", sub, "--help"); code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("source %s --help has no example: %s", sub, out)
		}
	}
}
