package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/messages"
)

// What the LED shows, in process on simulated hardware. (lumen ls's
// words, and the daemon's CPU while it shows a looping color:
// cmd/lumen's render_e2e_test.go.)

// renderSet creates state s and shows it.
func renderSet(r *simRig, s messages.State) {
	r.t.Helper()
	ctx := context.Background()
	if err := r.c.Call(ctx, "demo", messages.VerbCreateState, s, nil); err != nil {
		r.t.Fatal(err)
	}
	if err := r.c.Call(ctx, "demo", messages.VerbSetState, messages.SetStateRequest{Name: s.Name}, nil); err != nil {
		r.t.Fatal(err)
	}
}

// The LED reply tells the color people gave, before gamma and the
// brightness cap, as raw; its pixels are the duty: 255,140,40 is
// #ff8c28, driven as #ff4404.
func TestRenderRawIsTheColorNotTheDuty(t *testing.T) {
	r := newSimRig(t)
	renderSet(r, messages.State{Name: "amber", R: messages.Num(255), G: messages.Num(140), B: messages.Num(40)})
	l := r.waitLED("amber")
	if len(l.Raw) != 1 || l.Raw[0].Hex() != "#ff8c28" || len(l.Pixels) != 1 || l.Pixels[0].Hex() != "#ff4404" {
		t.Errorf("amber: raw %+v, pixels %+v; want raw #ff8c28, pixels #ff4404", l.Raw, l.Pixels)
	}
}

// Once a looping color is stopped, another state renders, and the
// stopped one journals no second error.
func TestRenderAnotherStateAfterAStoppedOne(t *testing.T) {
	r := newSimRig(t)
	ms := 20
	renderSet(r, messages.State{Name: "spin", R: messages.Channel{Expr: "(function(){ while (true) {} })()"}, Speed: &ms})
	r.waitLED("spin")
	var stopped *nats.Msg
	for range 10 * render.StopAfter {
		r.clock.Advance(time.Duration(ms) * time.Millisecond)
		r.led() // after the frame due
		for len(r.events) > 0 && stopped == nil {
			if m := <-r.events; m.Subject == "lumen.demo.evt.out.error" && strings.Contains(string(m.Data), `"kind":"render"`) {
				stopped = m
			}
		}
		if stopped != nil {
			break
		}
	}
	if stopped == nil || !strings.Contains(string(stopped.Data), `state \"spin\"`) || !strings.Contains(string(stopped.Data), "stopped") {
		t.Fatalf("the looping state's render error: %v", stopped)
	}
	if err := r.c.Call(context.Background(), "demo", messages.VerbSetState, messages.SetStateRequest{Name: "red"}, nil); err != nil {
		t.Fatal(err)
	}
	if l := r.waitLED("red"); l.Raw[0].Hex() != "#ff0000" {
		t.Errorf("red after a stopped state shows %+v", l.Raw)
	}
	for range 5 {
		r.clock.Advance(time.Duration(ms) * time.Millisecond)
		r.led()
	}
	r.none("lumen.demo.evt.out.error", `"kind":"render"`, "a second render error")
}
