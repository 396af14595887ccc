package main_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// A gpio source on the simulator: the hardware actor owns the pins and
// publishes each debounced edge; the source stores it and fires through
// the light's journaled inputs, so a rule reacts and replay --verify holds
// without reading a pin. The LED's and the button's pins are refused.
func TestGPIOSourceOnTheSimulator(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, dir)
	nc := connect(t, d.URL)
	state := func() string {
		s, _ := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"].(string)
		return s
	}
	vars := func() map[string]any {
		v, _ := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["vars"].(map[string]any)
		return v
	}
	// runs counts the source's journaled runs: each edge it takes is one
	// input that stores and fires.
	runs := func() int {
		t.Helper()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		n := 0
		for _, data := range readSubject(t, ctx, js, "lumen.demo.evt.in.data") {
			if strings.Contains(data, `"by":"source:pir"`) {
				n++
			}
		}
		return n
	}

	// The default wiring's button (BCM 4) and red LED channel (BCM 17)
	// are taken, on the simulator as on the Pi: 409 before anything is
	// journaled.
	for pin, what := range map[string]string{"4": "the button", "17": "the LED's red channel"} {
		r := request(t, nc, "lumen.demo.cmd.create_source", `{"name":"pir","type":"gpio","pin":`+pin+`,"fires":"motion"}`)
		if r.Code != "409" || !strings.Contains(r.Header, "BCM "+pin+" is "+what) {
			t.Fatalf("gpio source on BCM %s: code %q %s", pin, r.Code, r.Raw)
		}
	}
	if srcs := mustOK(t, request(t, nc, "lumen.demo.cmd.list_sources", `{}`)).Body["sources"].([]any); len(srcs) != 0 {
		t.Fatalf("a refused source was journaled: %v", srcs)
	}

	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"lit","r":255,"g":160,"b":40}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"*","on":"motion","to":"lit"}]}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source",
		`{"name":"pir","type":"gpio","pin":23,"pull":"down","edge":"rising","store":{"motion_level":"result.level","motion_at":"result.at"},"fires":"motion"}`))
	if out, _ := runCLI(t, d.URL, "source", "ls"); !strings.Contains(out, "gpio BCM 23 rising, pull down, debounce 20ms") {
		t.Fatalf("source ls: %s", out)
	}
	// A second source on the same pin must agree on its pull.
	if r := request(t, nc, "lumen.demo.cmd.create_source", `{"name":"pir2","type":"gpio","pin":23,"pull":"up","fires":"x"}`); r.Code != "409" {
		t.Fatalf("a second pull on BCM 23: code %q %s", r.Code, r.Raw)
	}
	// The hardware actor watches the pin once it has read the new
	// definition; until then the pin takes no level.
	lumentest.WaitFor(t, 20*time.Second, "BCM 23 to be watched", func() bool {
		return request(t, nc, "lumen.demo.cmd.gpio", `{"pin":23,"level":0}`).Code == ""
	})
	if state() == "lit" {
		t.Fatal("lit before any motion")
	}

	out, code := runCLI(t, d.URL, "gpio", "23", "high")
	if code != 0 || !strings.Contains(out, "motion") {
		t.Fatalf("lumen gpio 23 high: %d %s", code, out)
	}
	lumentest.WaitFor(t, 10*time.Second, "the rule on motion", func() bool { return state() == "lit" })
	if v := vars(); v["motion_level"] != 1.0 || v["motion_at"] == nil {
		t.Fatalf("stored %v", v)
	}

	// The falling edge is not the source's: nothing is stored or fired.
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"off"}`))
	if out, code := runCLI(t, d.URL, "gpio", "23", "low"); code != 0 {
		t.Fatalf("lumen gpio 23 low: %d %s", code, out)
	}
	// A pulse is a rising edge again; the edges are taken in order, so
	// once it has fired, the falling edge before it has been taken (and
	// ran the source, if it did).
	if out, code := runCLI(t, d.URL, "gpio", "23", "pulse", "--for", "50ms"); code != 0 {
		t.Fatalf("lumen gpio 23 pulse: %d %s", code, out)
	}
	lumentest.WaitFor(t, 10*time.Second, "the pulse's rule", func() bool { return state() == "lit" })
	if n := runs(); n != 2 {
		t.Fatalf("the source ran %d times for two rising edges: a falling edge stored or fired", n)
	}

	// Pins no source watches take no level.
	if out, code := runCLI(t, d.URL, "gpio", "5", "high"); code != 1 || !strings.Contains(out, "not watched") {
		t.Fatalf("lumen gpio 5 high: %d %s", code, out)
	}
	if out, code := runCLI(t, d.URL, "gpio", "23", "sideways"); code != 2 {
		t.Fatalf("lumen gpio 23 sideways: %d %s", code, out)
	}

	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify"); code != 0 {
		t.Fatalf("replay --verify: %s", out)
	}

	// After a restart the pin is watched again from the journaled
	// definition; its level at start is a baseline, not an edge, so
	// nothing fires twice.
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"off"}`))
	nc.Close()
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = startDaemon(t, dir)
	nc = connect(t, d.URL)
	lumentest.WaitFor(t, 20*time.Second, "BCM 23 to be watched after the restart", func() bool {
		return request(t, nc, "lumen.demo.cmd.gpio", `{"pin":23,"level":0}`).Code == ""
	})
	if out, code := runCLI(t, d.URL, "gpio", "23", "high"); code != 0 {
		t.Fatalf("lumen gpio 23 high after the restart: %d %s", code, out)
	}
	lumentest.WaitFor(t, 10*time.Second, "the rule after the restart", func() bool { return state() == "lit" })
	if n := runs(); n != 3 {
		t.Fatalf("the source ran %d times for three rising edges: the restart stored or fired", n)
	}
}
