package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// A schedule created without tz runs in the daemon's zone (TZ=Europe/Paris
// here), journaled with it, so that replay elsewhere reads the same
// times; one journaled without tz (before, or published straight to the
// light's inputs) stays UTC. schedule ls shows the zone and the next time
// in the CLI's own; get's next stays RFC 3339.
func TestScheduleZone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := lumentest.StartEnv(t, dir, []string{"TZ=Europe/Paris"})
	nc := connect(t, d.URL)
	paris, _ := time.LoadLocation("Europe/Paris")
	ny, _ := time.LoadLocation("America/New_York")

	nextOf := func(name string) time.Time {
		t.Helper()
		var next time.Time
		lumentest.WaitFor(t, 10*time.Second, "schedule "+name, func() bool {
			var g messages.GetReply
			if err := json.Unmarshal(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Raw, &g); err != nil {
				t.Fatal(err)
			}
			for _, s := range g.Schedules {
				if s.Name == name && s.Next != nil {
					next = *s.Next
					return true
				}
			}
			return false
		})
		return next
	}

	if out, code := runCLI(t, d.URL, "schedule", "add", "evening", "--cron", "0 19 * * *", "--fires", "evening"); code != 0 {
		t.Fatalf("schedule add: exit %d\n%s", code, out)
	}
	if in := lastEvent(t, nc, "lumen.demo.evt.in.config"); !strings.Contains(in, `"tz":"Europe/Paris"`) {
		t.Errorf("the journaled input does not name the daemon's zone: %s", in)
	}
	next := nextOf("evening")
	if p := next.In(paris); p.Hour() != 19 || p.Minute() != 0 || next.UTC().Hour() != 18 && next.UTC().Hour() != 17 {
		t.Errorf("evening's next is %v, want 19:00 Paris", next)
	}
	raw := string(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Raw)
	if !regexp.MustCompile(`"next":"20\d\d-\d\d-\d\dT1[78]:00:00Z"`).MatchString(raw) {
		t.Errorf("get's next is not RFC 3339 in UTC: %s", raw)
	}

	// An input without tz, as journaled before: UTC, as it always was.
	if err := nc.Publish("lumen.demo.evt.in.config", []byte(`{"op":"create_schedule","schedules":[{"name":"old","cron":"0 19 * * *","fires":"evening"}]}`)); err != nil {
		t.Fatal(err)
	}
	old := nextOf("old")
	if u := old.UTC(); u.Hour() != 19 || u.Minute() != 0 {
		t.Errorf("old's next is %v, want 19:00 UTC", old)
	}

	// A rollback to a configuration with it keeps it in UTC, as does an
	// export applied again (export names every zone, UTC too).
	var g messages.GetReply
	if err := json.Unmarshal(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Raw, &g); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "schedule", "add", "later", "--cron", "0 20 * * *", "--fires", "evening"); code != 0 {
		t.Fatalf("schedule add: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "rollback", fmt.Sprint(g.Seq)); code != 0 {
		t.Fatalf("rollback: exit %d\n%s", code, out)
	}
	if in := lastEvent(t, nc, "lumen.demo.evt.in.config"); !strings.Contains(in, `{"name":"old","cron":"0 19 * * *","tz":"UTC","fires":"evening"}`) {
		t.Errorf("the rollback's input does not keep old in UTC: %s", in)
	}
	if n := nextOf("old"); !n.Equal(old) {
		t.Errorf("old's next after the rollback is %v, want %v", n, old)
	}
	if out, code := runCLI(t, d.URL, "export"); code != 0 || !strings.Contains(out, "    tz: Europe/Paris\n") || !strings.Contains(out, "    tz: UTC\n") {
		t.Errorf("export: exit %d\n%s", code, out)
	}

	// The table, read in New York: each zone, and the next time there.
	out, code := runCLIEnv(t, d.URL, []string{"TZ=America/New_York"}, "schedule", "ls")
	for _, row := range []string{
		`(?m)^evening +0 19 \* \* \* +Europe/Paris +evening +` + regexp.QuoteMeta(next.In(ny).Format("2006-01-02 15:04 MST")) + `$`,
		`(?m)^old +0 19 \* \* \* +UTC +evening +` + regexp.QuoteMeta(old.In(ny).Format("2006-01-02 15:04 MST")) + `$`,
	} {
		if code != 0 || !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("schedule ls lacks %s: exit %d\n%s", row, code, out)
		}
	}

	// An apply file without tz: the daemon's zone too.
	file := filepath.Join(t.TempDir(), "light.yaml")
	yaml := "states:\n  - name: off\n    r: 0\n    g: 0\n    b: 0\nrules: []\nschedules:\n  - name: morning\n    cron: 0 7 * * *\n    fires: wake\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "apply", "-f", file); code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	if p := nextOf("morning").In(paris); p.Hour() != 7 || p.Minute() != 0 {
		t.Errorf("morning's next is %v, want 07:00 Paris", p)
	}
	if in := lastEvent(t, nc, "lumen.demo.evt.in.config"); !strings.Contains(in, `"tz":"Europe/Paris"`) {
		t.Errorf("the journaled apply does not name the daemon's zone: %s", in)
	}

	// Replayed on a machine in another zone, every output is the same.
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLIEnv(t, "", []string{"TZ=America/New_York"}, "replay", "--data", dir, "--light", "demo", "--verify", "--quiet"); code != 0 {
		t.Errorf("replay --verify in New York: exit %d\n%s", code, out)
	}
}
