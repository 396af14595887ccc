package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// lumen why and whatif print what the light did and would have done, and
// the same from an exported journal slice on a machine with no daemon;
// an edited slice fails to verify. (What why and whatif answer:
// actors/daemon's TestWhyAndWhatIf.)
func TestWhyAndJournalSlice(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	cfg := filepath.Join(t.TempDir(), "light.json")
	if err := os.WriteFile(cfg, []byte(`{
		"states":[{"name":"off","r":0,"g":0,"b":0},{"name":"cold","r":0,"g":128,"b":255},{"name":"warm","r":255,"g":128,"b":0}],
		"rules":[
			{"from":"*","on":"temp_updated","to":"cold","condition":"getData('temp') < getData('limit')"},
			{"from":"*","on":"temp_updated","to":"warm"},
			{"from":"off","on":"button_click","to":"warm","enabled":false}],
		"sources":[{"name":"thermo","type":"nats","subject":"home.thermo","store":{"temp":"result.temp"},"fires":"temp_updated"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) string {
		t.Helper()
		out, code := runCLI(t, d.URL, args...)
		if code != 0 {
			t.Fatalf("lumen %v: exit %d\n%s", args, code, out)
		}
		return out
	}
	cli("apply", "-f", cfg)
	cli("var", "set", "limit", "10")
	cli("state", "off")
	state := func() any { return mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"] }
	// The source starts after apply answers: publish until it stores.
	lumentest.WaitFor(t, 20*time.Second, "the thermometer's reading to reach the light", func() bool {
		if err := nc.Publish("home.thermo", []byte(`{"temp":5}`)); err != nil {
			t.Fatal(err)
		}
		// A reading a little while to arrive before the next.
		return lumentest.Within(100*time.Millisecond, func() bool { return state() == "cold" })
	})

	var w messages.WhyReply
	if err := json.Unmarshal([]byte(cli("why", "--json")), &w); err != nil {
		t.Fatal(err)
	}
	if w.State != "cold" || w.Rule == nil || w.Rule.To != "cold" || w.Input.By != "source:thermo" {
		t.Fatalf("why --json: %+v", w)
	}
	// The CLI's inputs say they are the CLI's.
	for _, r := range w.Reads {
		if r.Name == "limit" && (r.SetBy == nil || r.SetBy.Type != messages.InVar || r.SetBy.By != messages.WhoCLI) {
			t.Errorf("read limit, set by lumen var set: %+v %+v", r, r.SetBy)
		}
	}
	if w.Previous == nil || w.Previous.Input.Type != messages.InState || w.Previous.Input.By != messages.WhoCLI {
		t.Errorf("previous, lumen state off: %+v", w.Previous)
	}

	// A click no rule takes: why names the disabled rule.
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"off"}`))
	clickSeq := uint64(mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`)).Body["seq"].(float64))
	out := cli("why", fmt.Sprint(clickSeq))
	if !strings.Contains(out, "changed nothing") || !strings.Contains(out, ": it is disabled") || !strings.Contains(out, "by nats") {
		t.Errorf("lumen why %d:\n%s", clickSeq, out)
	}
	for _, bad := range []string{"999999", "x"} {
		if out, code := runCLI(t, d.URL, "why", bad); code == 0 {
			t.Errorf("lumen why %s: exit 0\n%s", bad, out)
		}
	}

	// What if the comparison had been the other way round: the
	// thermometer's reading would have made it warm; nothing changes.
	proposed := filepath.Join(t.TempDir(), "proposed.yaml")
	if err := os.WriteFile(proposed, []byte(strings.Replace(readFile(t, cfg), "getData('temp') < getData('limit')", "getData('temp') > getData('limit')", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := cli("whatif", "-f", proposed, "--from-seq", fmt.Sprint(w.Input.Seq)); !strings.Contains(out, "recorded cold → proposed warm") {
		t.Errorf("lumen whatif:\n%s", out)
	}
	badCfg := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(badCfg, []byte("states: [{name: a, r: 1, g: 1, b: 1}]\nrules: [{from: nowhere, on: x, to: a}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "whatif", "-f", badCfg); code != 1 || !strings.Contains(out, "nowhere") {
		t.Errorf("whatif of a bad proposal: exit %d\n%s", code, out)
	}

	// The slice, read where no daemon runs.
	slice := filepath.Join(t.TempDir(), "demo.slice")
	cli("journal", "export", "--light", "demo", "-o", slice)
	away := func(args ...string) (string, int) {
		return runCLI(t, "nats://127.0.0.1:1", args...)
	}
	if out, code := away("replay", "-f", slice, "--verify", "-q"); code != 0 || !strings.Contains(out, "every recorded output matches") {
		t.Fatalf("replay -f: exit %d\n%s", code, out)
	}
	out, code := away("why", "-f", slice, "--json", fmt.Sprint(w.Seq))
	var fromFile messages.WhyReply
	if code != 0 || json.Unmarshal([]byte(out), &fromFile) != nil {
		t.Fatalf("why -f: exit %d\n%s", code, out)
	}
	if a, b := mustJSON(t, fromFile), mustJSON(t, w); a != b {
		t.Errorf("why from the slice differs from the light's:\n%s\n%s", a, b)
	}
	// An edited slice: a recorded state that is not what replay computes.
	b, err := os.ReadFile(slice)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(t.TempDir(), "edited.slice")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(b), `"to":"cold"`, `"to":"warm"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := away("replay", "-f", edited, "--verify", "-q"); code != 1 || !strings.Contains(out, "differs") {
		t.Errorf("replay -f of an edited slice: exit %d\n%s", code, out)
	}
	if out, code := away("replay", "-f", cfg); code != 1 || !strings.Contains(out, "not a journal slice") {
		t.Errorf("replay -f of a configuration: exit %d\n%s", code, out)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
