package daemon_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/messages"
)

// A sun schedule takes the daemon's home, journaled with it; without a
// home it is refused, saying how to set one, and journals nothing.
func TestSunScheduleAtHome(t *testing.T) {
	d := startWith(t, func(c *daemon.Config) { c.Home = &tool.Home{Lat: 48.85, Lon: 2.35} }, "demo")
	nc := connectTo(t, d)
	mustOK(t, nc, messages.VerbCreateSchedule, `{"name":"wake","sun":"sunrise","offset":"-30m","fires":"wake"}`)
	g := mustOK(t, nc, messages.VerbGet, `{}`)
	scheds, _ := g["schedules"].([]any)
	if len(scheds) != 1 {
		t.Fatalf("schedules: %v", g["schedules"])
	}
	s := scheds[0].(map[string]any)
	if s["lat"] != 48.85 || s["lon"] != 2.35 || s["next"] == nil || s["tz"] != nil {
		t.Errorf("the sun schedule: %v, want the home's place and a next tick", s)
	}
	verifyReplay(t, nc, "demo")

	nc = connectTo(t, start(t, t.TempDir(), "demo"))
	seq := lastSeq(t, nc)
	b, code := request(t, nc, messages.VerbCreateSchedule, `{"name":"wake","sun":"sunrise","fires":"wake"}`)
	if code != "400" || !strings.Contains(string(b), "lumen up --home LAT,LON") {
		t.Errorf("a sun schedule with no home: %s %s, want 400 saying how to set one", code, b)
	}
	if after := lastSeq(t, nc); after != seq {
		t.Errorf("the refused sun schedule journaled %d events", after-seq)
	}
	mustOK(t, nc, messages.VerbCreateSchedule, `{"name":"wake","sun":"sunset","lat":-33.87,"lon":151.21,"fires":"wake"}`)
}
