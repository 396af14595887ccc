package main_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// lumen tail --since and --from-seq print the history, then go on live;
// the history of a time or sequence past the journal's end is none.
func TestTailHistory(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	for range 3 {
		if out, code := runCLI(t, d.URL, "fire", "button_click"); code != 0 {
			t.Fatalf("fire: %s", out)
		}
	}
	follow := func(args ...string) (*lumentest.Buffer, func()) {
		cmd := exec.Command(lumentest.Bin(t), append([]string{"tail", "--server", d.URL}, args...)...)
		var out lumentest.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return &out, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	}
	for _, args := range [][]string{{"--from-seq", "1"}, {"--since", "1h"}} {
		out, stop := follow(args...)
		// The three clicks: off → red → green → blue.
		lumentest.WaitFor(t, 10*time.Second, "tail "+strings.Join(args, " ")+" to print the history", func() bool {
			return strings.Contains(out.String(), "green → blue")
		})
		if s := out.String(); !strings.Contains(s, "off → red") || !strings.Contains(s, "red → green") {
			t.Errorf("tail %v:\n%s", args, s)
		}
		stop()
	}
	// Live after the history, nothing twice.
	out, stop := follow("--since", "1h")
	defer stop()
	lumentest.WaitFor(t, 10*time.Second, "the history", func() bool { return strings.Contains(out.String(), "green → blue") })
	if code := runCLIcode(t, d.URL, "fire", "button_click"); code != 0 {
		t.Fatal("fire")
	}
	lumentest.WaitFor(t, 10*time.Second, "the live click", func() bool { return strings.Contains(out.String(), "blue → red") })
	if n := strings.Count(out.String(), "off → red"); n != 1 {
		t.Errorf("the first click printed %d times:\n%s", n, out.String())
	}
	// A sequence past the end: only what comes.
	late, stopLate := follow("--from-seq", "100000")
	defer stopLate()
	time.Sleep(300 * time.Millisecond)
	if strings.Contains(late.String(), "→") {
		t.Errorf("tail --from-seq 100000 printed history:\n%s", late.String())
	}
	if out, code := runCLI(t, d.URL, "tail", "--since", "1h", "--from-seq", "3"); code != 2 {
		t.Errorf("--since with --from-seq: exit %d\n%s", code, out)
	}
}

func runCLIcode(t *testing.T, url string, args ...string) int {
	t.Helper()
	_, code := runCLI(t, url, args...)
	return code
}

// What the CLI prints of events is words: a command's reply, tail's
// inputs and outputs (config, schedule, var); the JSON they travel as
// is behind --json.
func TestEventsInWords(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	var printed strings.Builder
	for _, args := range [][]string{
		{"rule", "add", "off", "button_hold", "red"},
		{"schedule", "add", "evening", "--cron", "0 19 * * *", "--fires", "evening"},
		{"var", "set", "guests", `{"n":2}`},
		{"state", "green"},
	} {
		out, code := runCLI(t, d.URL, args...)
		if code != 0 {
			t.Fatalf("lumen %v: exit %d\n%s", args, code, out)
		}
		printed.WriteString(out)
	}
	tail := func(args ...string) string {
		cmd := exec.Command(lumentest.Bin(t), append([]string{"tail", "--server", d.URL, "--from-seq", "1"}, args...)...)
		var out lumentest.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		lumentest.WaitFor(t, 10*time.Second, "tail to print the state set last", func() bool { return strings.Contains(out.String(), "green") })
		return out.String()
	}
	printed.WriteString(tail())
	s := printed.String()
	if strings.Contains(s, `{"`) || strings.Contains(s, `":`) {
		t.Errorf("JSON in what the CLI printed:\n%s", s)
	}
	for _, want := range []string{"config append rules: rule r", "in  config   add rule off → red on button_hold",
		"schedule evening (0 19 * * *", "in  var      set guests = (n: 2)", "in  state    go to green"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in what the CLI printed:\n%s", want, s)
		}
	}
	if out := tail("--json"); !strings.Contains(out, `{"op":"append_rules"`) {
		t.Errorf("tail --json has no JSON:\n%s", out)
	}
}
