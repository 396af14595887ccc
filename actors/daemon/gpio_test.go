package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
)

// gpioRig is the demo light on simulated hardware (cfg.Hardware.Driver
// "sim") and a fake clock, in a data directory that outlives a daemon:
// the pins' levels are stamped, and debounced, on the clock the test
// moves.
type gpioRig struct {
	t     *testing.T
	clock *clocktest.Clock
	dir   string
	d     *daemon.Daemon
	nc    *nats.Conn
}

func newGPIORig(t *testing.T) *gpioRig {
	t.Helper()
	r := &gpioRig{t: t, clock: clocktest.New(time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC)), dir: t.TempDir()}
	r.start()
	return r
}

func (r *gpioRig) start() {
	r.t.Helper()
	r.d = startWith(r.t, func(c *daemon.Config) { c.Data, c.Clock, c.Hardware.Driver = r.dir, r.clock, "sim" }, "demo")
	r.nc = connectTo(r.t, r.d)
}

// restart stops the daemon and starts another on the same directory.
func (r *gpioRig) restart() {
	r.t.Helper()
	r.nc.Close()
	if err := r.d.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.start()
}

// level sets the simulated pin's level, as lumen gpio does, once the
// debounce window of the level before it has passed on the clock.
func (r *gpioRig) level(pin, level string) reply {
	r.t.Helper()
	r.clock.Advance(time.Second)
	return requestTo(r.t, r.nc, "demo", messages.VerbGPIO, `{"pin":`+pin+`,"level":`+level+`}`)
}

// watched waits until the hardware actor watches pin: until then the pin
// takes no level.
func (r *gpioRig) watched(pin string) {
	r.t.Helper()
	lumentest.WaitFor(r.t, 20*time.Second, "BCM "+pin+" to be watched", func() bool {
		return requestTo(r.t, r.nc, "demo", messages.VerbGPIO, `{"pin":`+pin+`,"level":0}`).Code == ""
	})
}

func (r *gpioRig) state() string {
	r.t.Helper()
	s, _ := mustOK(r.t, r.nc, messages.VerbGet, `{}`)["state"].(string)
	return s
}

// runs counts the source's journaled runs: each edge it takes is one
// input that stores and fires.
func (r *gpioRig) runs(source string) int {
	r.t.Helper()
	js, err := jetstream.New(r.nc)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := 0
	if err := journal.New(js).Replay(ctx, "lumen.demo.evt.in.data", 0, 0, func(m journal.Msg) error {
		if strings.Contains(string(m.Data), `"by":"source:`+source+`"`) {
			n++
		}
		return nil
	}); err != nil {
		r.t.Fatalf("reading the data inputs: %v", err)
	}
	return n
}

// A gpio source on the simulator: the hardware actor owns the pins and
// publishes each debounced edge; the source stores it and fires through
// the light's journaled inputs, so a rule reacts and replay --verify holds
// without reading a pin. The LED's and the button's pins are refused.
func TestGPIOSourceOnTheSimulator(t *testing.T) {
	r := newGPIORig(t)

	// The default wiring's button (BCM 4) and red LED channel (BCM 17)
	// are taken, on the simulator as on the Pi: 409 before anything is
	// journaled.
	for pin, what := range map[string]string{"4": "the button", "17": "the LED's red channel"} {
		c := requestTo(t, r.nc, "demo", messages.VerbCreateSource, `{"name":"pir","type":"gpio","pin":`+pin+`,"fires":"motion"}`)
		if c.Code != "409" || !strings.Contains(c.Header, "BCM "+pin+" is "+what) {
			t.Fatalf("gpio source on BCM %s: code %q %s", pin, c.Code, c.Raw)
		}
	}
	if srcs := mustOK(t, r.nc, messages.VerbListSources, `{}`)["sources"].([]any); len(srcs) != 0 {
		t.Fatalf("a refused source was journaled: %v", srcs)
	}

	mustOK(t, r.nc, messages.VerbCreateState, `{"name":"lit","r":255,"g":160,"b":40}`)
	mustOK(t, r.nc, messages.VerbAppendRules, `{"rules":[{"from":"*","on":"motion","to":"lit"}]}`)
	mustOK(t, r.nc, messages.VerbCreateSource,
		`{"name":"pir","type":"gpio","pin":23,"pull":"down","edge":"rising","store":{"motion_level":"result.level","motion_at":"result.at"},"fires":"motion"}`)
	// A second source on the same pin must agree on its pull.
	if c := requestTo(t, r.nc, "demo", messages.VerbCreateSource, `{"name":"pir2","type":"gpio","pin":23,"pull":"up","fires":"x"}`); c.Code != "409" {
		t.Fatalf("a second pull on BCM 23: code %q %s", c.Code, c.Raw)
	}
	r.watched("23")
	if r.state() == "lit" {
		t.Fatal("lit before any motion")
	}

	if c := r.level("23", "1"); c.Code != "" || c.Body["changed"] != true {
		t.Fatalf("BCM 23 high: %s %s", c.Code, c.Raw)
	}
	lumentest.WaitFor(t, 10*time.Second, "the rule on motion", func() bool { return r.state() == "lit" })
	if v := mustOK(t, r.nc, messages.VerbGet, `{}`)["vars"].(map[string]any); v["motion_level"] != 1.0 || v["motion_at"] == nil {
		t.Fatalf("stored %v", v)
	}

	// The falling edge is not the source's: nothing is stored or fired.
	mustOK(t, r.nc, messages.VerbSetState, `{"name":"off"}`)
	if c := r.level("23", "0"); c.Code != "" || c.Body["changed"] != true {
		t.Fatalf("BCM 23 low: %s %s", c.Code, c.Raw)
	}
	// A pulse is a rising edge again; the edges are taken in order, so
	// once it has fired, the falling edge before it has been taken (and
	// ran the source, if it did).
	if c := r.level("23", "1"); c.Code != "" {
		t.Fatalf("BCM 23 pulse: %s %s", c.Code, c.Raw)
	}
	lumentest.WaitFor(t, 10*time.Second, "the pulse's rule", func() bool { return r.state() == "lit" })
	if n := r.runs("pir"); n != 2 {
		t.Fatalf("the source ran %d times for two rising edges: a falling edge stored or fired", n)
	}
	if c := r.level("23", "0"); c.Code != "" {
		t.Fatalf("BCM 23 pulse's end: %s %s", c.Code, c.Raw)
	}

	// Pins no source watches take no level.
	if c := r.level("5", "1"); c.Code != "409" || !strings.Contains(c.Header, "not watched") {
		t.Fatalf("BCM 5 high: %s %s", c.Code, c.Raw)
	}
	verifyReplay(t, r.nc, "demo")

	// After a restart the pin is watched again from the journaled
	// definition; its level at start is a baseline, not an edge, so
	// nothing fires twice.
	mustOK(t, r.nc, messages.VerbSetState, `{"name":"off"}`)
	r.restart()
	r.watched("23")
	if c := r.level("23", "1"); c.Code != "" {
		t.Fatalf("BCM 23 high after the restart: %s %s", c.Code, c.Raw)
	}
	lumentest.WaitFor(t, 10*time.Second, "the rule after the restart", func() bool { return r.state() == "lit" })
	if n := r.runs("pir"); n != 3 {
		t.Fatalf("the source ran %d times for three rising edges: the restart stored or fired", n)
	}
	verifyReplay(t, r.nc, "demo")
}
