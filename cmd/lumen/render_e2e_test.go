package main_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// renderErrors counts the render errors a light journals.
type renderErrors struct {
	mu   sync.Mutex
	msgs []string
}

func watchRenderErrors(t *testing.T, nc *nats.Conn, light string) *renderErrors {
	t.Helper()
	w := &renderErrors{}
	sub, err := nc.Subscribe("lumen."+light+".evt.out.error", func(m *nats.Msg) {
		var env messages.Envelope
		var d messages.OutErrorData
		if messages.DecodeEnvelope(m.Data, &env) == nil && json.Unmarshal(env.Data, &d) == nil && d.Kind == messages.ErrorRender {
			w.mu.Lock()
			w.msgs = append(w.msgs, d.Error)
			w.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return w
}

func (w *renderErrors) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// waitLED waits until light's LED shows want (#rrggbb, before gamma).
func waitLED(t *testing.T, nc *nats.Conn, light, want string) {
	t.Helper()
	lumentest.WaitFor(t, 10*time.Second, light+"'s LED showing "+want, func() bool {
		var led messages.LEDReply
		r := request(t, nc, "lumen."+light+".cmd.led", `{}`)
		if json.Unmarshal(r.Raw, &led) != nil || len(led.Raw) == 0 {
			return false
		}
		return led.Raw[0].Hex() == want
	})
}

// A state whose expression never finishes a frame: the daemon stops
// rendering it, its CPU staying low while the light shows it, journals
// one render error, dims the LED to the stopped color, and lumen ls
// shows that. (The light staying usable, the state fixed or another
// chosen: actors/daemon's TestLoopingColorStops and
// TestRenderAnotherStateAfterAStoppedOne.)
func TestLoopingColorIsStopped(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--hardware", "sim")
	nc := connect(t, d.URL)
	errs := watchRenderErrors(t, nc, "demo")
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"spin","r":"(function(){while(true){}})()","g":0,"b":0,"speed":20}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"spin"}`))

	lumentest.WaitFor(t, 10*time.Second, "a render error", func() bool { return len(errs.all()) > 0 })
	// Stopped: the LED dimmed to the stopped color.
	waitLED(t, nc, "demo", "#400020")
	// The LED's frames are announced while a state is rendered: none
	// should come for a stopped one (a measure that a loaded machine,
	// which starves the daemon's CPU, does not blur).
	frames, err := nc.SubscribeSync("lumen.demo.led.frame")
	if err != nil {
		t.Fatal(err)
	}
	before, err := lumentest.CPUTime(d.Pid())
	if err != nil {
		t.Fatal(err)
	}
	const window = 3 * time.Second
	time.Sleep(window)
	after, err := lumentest.CPUTime(d.Pid())
	if err != nil {
		t.Fatal(err)
	}
	used := after - before
	t.Logf("CPU of the daemon showing a looping state: %v in %v", used, window)
	if used > window/5 {
		t.Errorf("the daemon used %v of CPU in %v showing a looping state (over 20%% of a core)", used, window)
	}
	if n, _, _ := frames.Pending(); n > 0 {
		t.Errorf("%d frames of the looping state were rendered in %v", n, window)
	}
	if got := errs.all(); len(got) != 1 || !strings.Contains(got[0], `state "spin"`) || !strings.Contains(got[0], "stopped") {
		t.Errorf("render errors journaled: %q, want one that says spin is stopped", got)
	}
	waitLED(t, nc, "demo", "#400020")
	out, code := runCLI(t, d.URL, "ls")
	if code != 0 || !regexp.MustCompile(`(?m)^demo +spin +#400020 `).MatchString(out) {
		t.Errorf("lumen ls: exit %d\n%s", code, out)
	}
}

// People see the color they gave, before gamma and the brightness cap:
// lumen ls shows #ff8c28 for 255,140,40 (the LED's duty is #ff4404:
// actors/daemon's TestRenderRawIsTheColorNotTheDuty).
func TestListShowsTheColorNotTheDuty(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--hardware", "sim")
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"amber","r":255,"g":140,"b":40}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"amber"}`))
	waitLED(t, nc, "demo", "#ff8c28")
	out, code := runCLI(t, d.URL, "ls")
	if code != 0 || !regexp.MustCompile(`(?m)^demo +amber +#ff8c28 `).MatchString(out) {
		t.Errorf("lumen ls: exit %d\n%s", code, out)
	}
}
