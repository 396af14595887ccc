package device_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/device"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/hardware/hwtest"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/hardware/sim"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// gpioRig is the rig's light with a second hardware actor, "k"'s pins:
// simulated inputs that keep BCM 4 for the button.
func gpioRig(t *testing.T) (*rig, *sim.Inputs, chan *nats.Msg) {
	t.Helper()
	r := newRig(t)
	// The rig's own device has no inputs; stop it so that one actor owns
	// the pins, like in the daemon.
	_ = r.sys.Root.StopFuture(r.dev).Wait()
	// The pins and the device share the rig's manual clock, so debounce
	// windows pass only when the test says so, however slow the machine.
	in := sim.NewInputs(map[int]string{4: "the button"}, r.clock)
	t.Cleanup(func() { _ = in.Halt() })
	dp, err := device.Props(device.Config{Light: "k", Device: hwtest.NewDevice(1, r.clock), Inputs: in, Journal: r.j, Conn: r.nc, Clock: r.clock,
		Render: render.Options{Pixels: 1, Gamma: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r.dev = r.sys.Root.Spawn(dp)
	edges := make(chan *nats.Msg, 64)
	sub, err := r.nc.ChanSubscribe(subject.AllGPIO("k"), edges)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return r, in, edges
}

func (r *rig) setPin(t *testing.T, pin int, high bool) any {
	t.Helper()
	res, err := r.sys.Root.RequestFuture(r.dev, &device.SetPin{Pin: pin, High: high}, 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// waitWatched sets pin low until the device watches it (it reads the
// sources from the light's model, off its goroutine).
func (r *rig) waitWatched(t *testing.T, pin int) {
	t.Helper()
	lumentest.WaitFor(t, 10*time.Second, fmt.Sprintf("BCM %d to be watched", pin), func() bool {
		_, ok := r.setPin(t, pin, false).(*messages.GPIOReply)
		return ok
	})
}

func nextEdge(t *testing.T, edges chan *nats.Msg) (string, messages.GPIOEvent) {
	t.Helper()
	select {
	case m := <-edges:
		var ev messages.GPIOEvent
		if err := json.Unmarshal(m.Data, &ev); err != nil {
			t.Fatal(err)
		}
		return m.Subject, ev
	case <-time.After(5 * time.Second):
		t.Fatal("no edge published")
	}
	return "", messages.GPIOEvent{}
}

func TestGPIOSourcePinIsWatchedDebouncedAndPublished(t *testing.T) {
	r, _, edges := gpioRig(t)
	r.command(t, messages.InConfig, `{"op":"create_source","sources":[{"name":"pir","type":"gpio","pin":23,"pull":"down","debounce_ms":50,"fires":"motion"}]}`)
	r.waitWatched(t, 23)

	// A clean rise is published at once, with its level and edge.
	if rep := r.setPin(t, 23, true).(*messages.GPIOReply); !rep.OK || !rep.Changed || rep.Level != 1 {
		t.Fatalf("set high: %+v", rep)
	}
	subj, ev := nextEdge(t, edges)
	if subj != subject.GPIO("k", 23) || ev.Pin != 23 || ev.Level != 1 || ev.Edge != "rising" || ev.At.IsZero() {
		t.Fatalf("edge on %s: %+v", subj, ev)
	}
	// Bounces inside the 50 ms window are not edges; the pin settles
	// low, which is reported when the window closes.
	r.setPin(t, 23, false)
	r.setPin(t, 23, true)
	r.clock.Advance(10 * time.Millisecond)
	r.setPin(t, 23, false)
	select {
	case m := <-edges:
		t.Fatalf("a bounce was published: %s", m.Data)
	case <-time.After(100 * time.Millisecond):
	}
	r.clock.Advance(60 * time.Millisecond)
	_, ev = nextEdge(t, edges)
	if ev.Level != 0 || ev.Edge != "falling" {
		t.Fatalf("settled edge %+v", ev)
	}
	select {
	case m := <-edges:
		t.Fatalf("a bounce was published: %s", m.Data)
	case <-time.After(150 * time.Millisecond):
	}
	// The same level again is no edge.
	if rep := r.setPin(t, 23, false).(*messages.GPIOReply); rep.Changed {
		t.Fatalf("set low twice: %+v", rep)
	}

	// Deleting the source gives the pin back.
	r.command(t, messages.InConfig, `{"op":"delete_source","name":"pir"}`)
	lumentest.WaitFor(t, 10*time.Second, "BCM 23 given back after delete_source", func() bool {
		e, ok := r.setPin(t, 23, true).(*messages.ErrorReply)
		return ok && e.Code == 409 && strings.Contains(e.Error, "not watched")
	})
}

func TestGPIOPinsOwnedByTheDevice(t *testing.T) {
	r, _, _ := gpioRig(t)
	r.command(t, messages.InConfig, `{"op":"create_source","sources":[{"name":"pir","type":"gpio","pin":23,"pull":"down","fires":"motion"}]}`)
	r.waitWatched(t, 23)

	check := func(js string) error {
		t.Helper()
		d, err := datasource.Decode([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		pir, _ := datasource.Decode([]byte(`{"name":"pir","type":"gpio","pin":23,"pull":"down","fires":"motion"}`))
		res, err := r.sys.Root.RequestFuture(r.dev, &device.CheckSource{Def: d, Others: []datasource.Def{pir}}, 5*time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		return res.(*device.CheckResult).Err
	}
	for _, tc := range []struct {
		name, def, want string
	}{
		{"a free pin", `{"name":"reed","type":"gpio","pin":24,"pull":"up","fires":"door"}`, ""},
		{"the button's pin", `{"name":"b","type":"gpio","pin":4,"fires":"x"}`, "BCM 4 is the button"},
		{"another pull on a watched pin", `{"name":"b","type":"gpio","pin":23,"pull":"up","fires":"x"}`, `watched by source "pir"`},
		{"the same source redefined", `{"name":"pir","type":"gpio","pin":23,"pull":"up","fires":"x"}`, ""},
	} {
		err := check(tc.def)
		if (tc.want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), tc.want) || !errors.Is(err, datasource.ErrConflict))) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}

	// Pins nobody watches, and the button's, take no level.
	for _, pin := range []int{5, 4} {
		if e, ok := r.setPin(t, pin, true).(*messages.ErrorReply); !ok || e.Code != 409 {
			t.Fatalf("BCM %d: %+v", pin, e)
		}
	}
}

func TestGPIOWithoutInputs(t *testing.T) {
	r := newRig(t) // its fake device has no input pins, like a light beside the Pi's
	res, err := r.sys.Root.RequestFuture(r.dev, &device.SetPin{Pin: 23, High: true}, 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := res.(*messages.ErrorReply); !ok || e.Code != 409 || !strings.Contains(e.Error, "no GPIO input pins") {
		t.Fatalf("set a pin of a light without pins: %+v", res)
	}
	d, _ := datasource.Decode([]byte(`{"name":"pir","type":"gpio","pin":23,"fires":"motion"}`))
	res, err = r.sys.Root.RequestFuture(r.dev, &device.CheckSource{Def: d}, 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := res.(*device.CheckResult).Err; !errors.Is(err, datasource.ErrConflict) {
		t.Fatalf("check on a light without pins: %v", err)
	}
}
