package main_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// A Ctrl-C during lumen press hold releases the button it pressed, and
// lumen press release lets go of a button a program left down (issue 26,
// item 4).
func TestPressInterruptedReleases(t *testing.T) {
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	events := lumentest.Events(t, nc, "demo")

	hold := exec.Command(lumenBin(t), "press", "hold", "--for", "20s")
	hold.Env = append(os.Environ(), "NATS_URL="+d.URL, "LUMEN_LIGHT=")
	var out syncBuffer
	hold.Stdout, hold.Stderr = &out, &out
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	// The light has seen the press once it decides it is a hold.
	lumentest.WaitEvent(t, events, "lumen.demo.evt.in.fired", "button_hold")
	if err := hold.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- hold.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = hold.Process.Kill()
		t.Fatalf("lumen press hold did not end on SIGINT:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "interrupted: the button is released") {
		t.Errorf("press hold on SIGINT said:\n%s", out.String())
	}
	lumentest.WaitEvent(t, events, "lumen.demo.evt.in.fired", "button_release")
	if got, code := runCLI(t, d.URL, "press"); code != 0 {
		t.Fatalf("press after an interrupted hold: exit %d:\n%s", code, got)
	}

	// A program that sent down and never up: press says how to release
	// it, and press release does.
	mustOK(t, request(t, nc, "lumen.demo.cmd.button", `{"edge":"down"}`))
	got, code := runCLI(t, d.URL, "press")
	if code == 0 || !strings.Contains(got, "'lumen press release'") {
		t.Errorf("press of a held button: exit %d:\n%s", code, got)
	}
	if got, code := runCLI(t, d.URL, "press", "release"); code != 0 || !strings.Contains(got, "released the button") {
		t.Errorf("press release: exit %d:\n%s", code, got)
	}
	if got, code := runCLI(t, d.URL, "press", "release"); code != 0 || !strings.Contains(got, "nothing to release") {
		t.Errorf("press release of a button that is up: exit %d:\n%s", code, got)
	}
	if got, code := runCLI(t, d.URL, "press"); code != 0 {
		t.Errorf("press after release: exit %d:\n%s", code, got)
	}
}
