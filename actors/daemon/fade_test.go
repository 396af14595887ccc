package daemon_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// fadeLED is what the demo light's LED shows (after the fade, gamma and
// the cap): pixels, not raw (the target); a color no LED shows before
// the hardware has its first model.
func (r *timedRig) fadeLED() messages.Pixel {
	r.t.Helper()
	var l messages.LEDReply
	b := r.okRaw(messages.VerbLED, `{}`)
	if err := json.Unmarshal(b, &l); err != nil {
		r.t.Fatalf("led: %s", b)
	}
	if l.State == "" || len(l.Pixels) == 0 {
		return messages.Pixel{R: 1, G: 2, B: 3}
	}
	return l.Pixels[0]
}

// okRaw is ok's reply undecoded.
func (r *timedRig) okRaw(verb, body string) []byte {
	r.t.Helper()
	b, code := request(r.t, r.nc, verb, body)
	if code != "" {
		r.t.Fatalf("%s %s: %s %s", verb, body, code, b)
	}
	return b
}

// A 30-minute fade survives a restart: computed from its journaled start
// and length, the LED after the restart is where the clock says (not at
// the target, nor back at the start), and it ends on time.
func TestFadeResumesAfterARestart(t *testing.T) {
	r := newTimedRig(t, func(c *daemon.Config) { c.Hardware.Gamma = 1 }) // pixels are then the colors

	r.ok(messages.VerbApply, `{"states":[{"name":"warm","r":255,"g":147,"b":41}],"rules":[],"state":"off"}`)
	warm := messages.Pixel{R: 255, G: 147, B: 41}
	rep := r.ok(messages.VerbSetState, `{"name":"warm","fade_ms":1800000}`)
	if outs, _ := json.Marshal(rep["outputs"]); !json.Valid(outs) || !strings.Contains(string(outs), `"fade_ms":1800000`) {
		t.Fatalf("set_state with fade_ms: %v", rep)
	}
	lumentest.WaitFor(t, 10*time.Second, "the fade to start", func() bool { return r.fadeLED() != warm })

	r.clock.Advance(15 * time.Minute)
	var before messages.Pixel
	lumentest.WaitFor(t, 10*time.Second, "the LED halfway", func() bool {
		before = r.fadeLED()
		return before != warm && before != (messages.Pixel{}) && before != (messages.Pixel{R: 1, G: 2, B: 3})
	})
	g := r.ok(messages.VerbGet, `{}`)
	if f, ok := g["fade"].(map[string]any); !ok || f["ms"] != 1800000.0 {
		t.Fatalf("get's fade: %v", g["fade"])
	}

	r.restart(0)
	lumentest.WaitFor(t, 10*time.Second, "the LED where the clock says after the restart", func() bool { return r.fadeLED() == before })

	r.clock.Advance(14 * time.Minute)
	lumentest.WaitFor(t, 10*time.Second, "the fade a minute before its end", func() bool {
		p := r.fadeLED()
		return p != before && p != warm && p.G > before.G
	})
	r.clock.Advance(time.Minute)
	lumentest.WaitFor(t, 10*time.Second, "the fade to end on time", func() bool { return r.fadeLED() == warm })

	// A fade out of range journals nothing.
	seq := lastSeq(t, r.nc)
	if b, code := request(t, r.nc, messages.VerbSetState, `{"name":"off","fade_ms":-1}`); code != "400" || !strings.Contains(string(b), `\"fade_ms\" -1 is out of range`) {
		t.Errorf("fade_ms -1: %s %s", code, b)
	}
	if after := lastSeq(t, r.nc); after != seq {
		t.Errorf("a refused fade journaled %d events", after-seq)
	}
}
