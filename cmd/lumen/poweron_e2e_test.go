package main_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// What a light shows when the daemon starts after a power cut (SIGKILL)
// is its power_on: restore keeps the state it was in, off and "state
// NAME" move it there, journaled by power_on; after a clean stop
// (SIGTERM) nothing moves.
func TestPowerOnAfterAnUncleanStop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		powerOn, kill, want string
	}{
		{"", "kill", "red"},
		{"off", "kill", "off"},
		{"state blue", "kill", "blue"},
		{"off", "stop", "red"},
	} {
		t.Run(strings.ReplaceAll(tc.powerOn+" "+tc.kill, " ", "_"), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			d := startDaemon(t, dir)
			nc := connect(t, d.URL)
			cfg := `{"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],"rules":[],"state":"red"`
			if tc.powerOn != "" {
				cfg += `,"power_on":"` + tc.powerOn + `"`
			}
			mustOK(t, request(t, nc, "lumen.demo.cmd.apply", cfg+`}`))
			if tc.kill == "kill" {
				d.Kill()
			} else if err := d.Stop(); err != nil {
				t.Fatal(err)
			}
			nc.Close()

			d = startDaemon(t, dir)
			if out, _ := runCLI(t, d.URL, "state"); strings.TrimSpace(out) != tc.want {
				t.Fatalf("after %s with power_on %q: state %q, want %s\n%s", tc.kill, tc.powerOn, out, tc.want, d.Logs())
			}
			out, code := runCLI(t, d.URL, "why")
			switch {
			case tc.want != "red" && (code != 0 || !strings.Contains(out, "by power_on")):
				t.Errorf("why after power_on moved it: exit %d\n%s", code, out)
			case tc.want == "red" && strings.Contains(out, "power_on"):
				t.Errorf("why when nothing moved: %s", out)
			}
		})
	}
}

// A fade across a SIGKILL: a 6-second fade from blue to red, the daemon
// killed in the middle and started again: the LED resumes in between
// (not at the start, not at the target), and reaches red when the fade
// was to end.
func TestFadeAcrossSIGKILL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := startDaemon(t, dir)
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.apply", `{"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],"rules":[],"state":"blue"}`))
	start := time.Now()
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"red","fade_ms":6000}`))
	pixel := func() (r, b int) {
		var led struct{ Pixels []struct{ R, G, B int } }
		if err := json.Unmarshal(mustOK(t, request(t, nc, "lumen.demo.cmd.led", `{}`)).Raw, &led); err != nil || len(led.Pixels) == 0 {
			t.Fatalf("led: %v", err)
		}
		return led.Pixels[0].R, led.Pixels[0].B
	}
	// Into the fade, in real time (the clock is the daemon's own).
	lumentest.WaitFor(t, 10*time.Second, "the fade to be a third of the way", func() bool { r, _ := pixel(); return r > 80 })
	d.Kill()
	nc.Close()

	d = startDaemon(t, dir)
	nc = connect(t, d.URL)
	var r, b int
	lumentest.WaitFor(t, 10*time.Second, "the LED to show the light after the restart", func() bool { r, b = pixel(); return r+b > 0 })
	if time.Since(start) < 5*time.Second && (r == 0 || b == 0) {
		t.Errorf("%v after the fade began, after a SIGKILL, the LED shows r %d b %d: want a color between blue and red", time.Since(start), r, b)
	}
	lumentest.WaitFor(t, 10*time.Second, "the fade to end", func() bool { r, b = pixel(); return r == 255 && b == 0 })
	if late := time.Since(start) - 6*time.Second; late > 2*time.Second {
		t.Errorf("the fade ended %v after its end", late)
	}
}
