package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// lumen gpio drives a simulated pin and prints what the light did;
// source ls shows a gpio source's wiring. The light's side (pins refused,
// edges stored and fired, a restart) is actors/daemon's
// TestGPIOSourceOnTheSimulator.
func TestGPIOCommand(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	state := func() string {
		s, _ := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"].(string)
		return s
	}
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"lit","r":255,"g":160,"b":40}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"*","on":"motion","to":"lit"}]}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source",
		`{"name":"pir","type":"gpio","pin":23,"pull":"down","edge":"rising","store":{"motion_level":"result.level","motion_at":"result.at"},"fires":"motion"}`))
	if out, _ := runCLI(t, d.URL, "source", "ls"); !strings.Contains(out, "gpio BCM 23 rising, pull down, debounce 20ms") {
		t.Fatalf("source ls: %s", out)
	}
	lumentest.WaitFor(t, 20*time.Second, "BCM 23 to be watched", func() bool {
		return request(t, nc, "lumen.demo.cmd.gpio", `{"pin":23,"level":0}`).Code == ""
	})

	out, code := runCLI(t, d.URL, "gpio", "23", "high")
	if code != 0 || !strings.Contains(out, "motion") {
		t.Fatalf("lumen gpio 23 high: %d %s", code, out)
	}
	lumentest.WaitFor(t, 10*time.Second, "the rule on motion", func() bool { return state() == "lit" })
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"off"}`))
	if out, code := runCLI(t, d.URL, "gpio", "23", "low"); code != 0 {
		t.Fatalf("lumen gpio 23 low: %d %s", code, out)
	}
	if out, code := runCLI(t, d.URL, "gpio", "23", "pulse", "--for", "50ms"); code != 0 {
		t.Fatalf("lumen gpio 23 pulse: %d %s", code, out)
	}
	lumentest.WaitFor(t, 10*time.Second, "the pulse's rule", func() bool { return state() == "lit" })

	// Pins no source watches take no level; a level is high, low or pulse.
	if out, code := runCLI(t, d.URL, "gpio", "5", "high"); code != 1 || !strings.Contains(out, "not watched") {
		t.Fatalf("lumen gpio 5 high: %d %s", code, out)
	}
	if out, code := runCLI(t, d.URL, "gpio", "23", "sideways"); code != 2 {
		t.Fatalf("lumen gpio 23 sideways: %d %s", code, out)
	}
}
