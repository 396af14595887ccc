package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/messages"
)

// names: in lumen.yaml is read as a person writes it, the light's name
// in any case, and refused with what to change: a light this Pi does not
// run, names apply would refuse, a light given nothing.
func TestNamesInLumenYAML(t *testing.T) {
	for _, tt := range []struct {
		name, yaml, err string
	}{
		{"room and aliases", "names: {Bedroom_Lamp: {room: Bedroom, aliases: [bedroom lamp, bedside]}}", ""},
		{"clear both", `names: {bedroom_lamp: {room: "", aliases: []}}`, ""},
		{"an unknown key", "names: {bedroom_lamp: {floor: first}}", "floor"},
		{"a light not run", "names: {kitchen: {room: kitchen}}", "names: kitchen is not one of --light bedroom_lamp, hall; name a light this Pi runs"},
		{"nothing given", "names: {hall: {}}", "names: hall gives neither room nor aliases"},
		{"a bad room", "names: {hall: {room: hall/way}}", `names: hall: room "hall/way" holds '/'`},
		{"an alias twice", "names: {hall: {aliases: [porch, Porch]}}", `names: hall: aliases[1] "Porch" is aliases[0] "porch" again`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "lumen.yaml"), []byte("lights: [bedroom_lamp, hall]\n"+tt.yaml+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := daemon.LoadConfig("", daemon.DefaultConfig(dir), nil)
			if err == nil {
				err = cfg.Validate()
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("error %v, want one with %q", err, tt.err)
			}
			if tt.name == "room and aliases" {
				n, ok := cfg.Names["bedroom_lamp"]
				if !ok || n.Room == nil || *n.Room != "Bedroom" || n.Aliases == nil || !slices.Equal(*n.Aliases, []string{"bedroom lamp", "bedside"}) {
					t.Errorf("names %+v", cfg.Names)
				}
			}
		})
	}
}

// The names lumen.yaml gives a light are set when it starts, journaled
// by lumen.yaml with one line in the log; a start with the same names
// journals nothing, and a key left out keeps what the light has.
func TestNamesAtStart(t *testing.T) {
	data := t.TempDir()
	var (
		mu   sync.Mutex
		logs []string
	)
	run := func(names map[string]daemon.LightNames) *daemon.Daemon {
		return startWith(t, func(c *daemon.Config) {
			c.Data, c.Names = data, names
			logf := c.Logf
			c.Logf = func(format string, args ...any) {
				mu.Lock()
				logs = append(logs, strings.TrimSpace(fmt.Sprintf(format, args...)))
				mu.Unlock()
				logf(format, args...)
			}
		}, "bedroom_lamp", "hall")
	}
	logged := func(prefix string) []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, l := range logs {
			if strings.HasPrefix(l, prefix) {
				out = append(out, l)
			}
		}
		return out
	}
	get := func(d *daemon.Daemon, light string) messages.GetReply {
		t.Helper()
		var g messages.GetReply
		if err := json.Unmarshal(requestTo(t, connectTo(t, d), light, messages.VerbGet, `{}`).Raw, &g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	room, aliases := "Bedroom", []string{"Bedroom Lamp", "bedside"}
	names := map[string]daemon.LightNames{"bedroom_lamp": {Room: &room, Aliases: &aliases}}

	d := run(names)
	if g := get(d, "bedroom_lamp"); g.Room != "bedroom" || !slices.Equal(g.Aliases, []string{"bedroom lamp", "bedside"}) {
		t.Errorf("bedroom_lamp: room %q, aliases %q", g.Room, g.Aliases)
	}
	if g := get(d, "hall"); g.Room != "" || g.Aliases != nil {
		t.Errorf("hall, which lumen.yaml does not name: room %q, aliases %q", g.Room, g.Aliases)
	}
	var h messages.HistoryReply
	if err := json.Unmarshal(requestTo(t, connectTo(t, d), "bedroom_lamp", messages.VerbHistory, `{}`).Raw, &h); err != nil || len(h.Changes) == 0 {
		t.Fatalf("history: %v %+v", err, h)
	}
	last := h.Changes[len(h.Changes)-1]
	if last.By != messages.WhoConfig || last.Summary != "room (none) → bedroom, +alias bedroom lamp, +alias bedside" {
		t.Errorf("history's last change: by %s: %s", last.By, last.Summary)
	}
	if got, want := logged("names:"), []string{"names: bedroom_lamp: room bedroom, aliases bedroom lamp, bedside (from lumen.yaml)"}; !slices.Equal(got, want) {
		t.Errorf("log %q, want %q", got, want)
	}
	seq := lastSeq(t, connectTo(t, d))
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// The same names, written otherwise: nothing new.
	room2, aliases2 := "bedroom", []string{"bedroom  lamp", "Bedside"}
	d = run(map[string]daemon.LightNames{"bedroom_lamp": {Room: &room2, Aliases: &aliases2}})
	if got := lastSeq(t, connectTo(t, d)); got != seq {
		t.Errorf("a start with the same names journaled events %d to %d", seq+1, got)
	}
	if got := logged("names:"); len(got) != 1 {
		t.Errorf("log %q, want the first start's line only", got)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// Only aliases, cleared: the room stays.
	none := []string{}
	d = run(map[string]daemon.LightNames{"bedroom_lamp": {Aliases: &none}})
	if g := get(d, "bedroom_lamp"); g.Room != "bedroom" || g.Aliases != nil {
		t.Errorf("after aliases: []: room %q, aliases %q", g.Room, g.Aliases)
	}
	if got := logged("names:"); len(got) != 2 || got[1] != "names: bedroom_lamp: no aliases (from lumen.yaml)" {
		t.Errorf("log %q", got)
	}
}

// set_names answers as a mutation, with what it changed: the room and
// the aliases, nothing else; {} and names apply would refuse are 400s
// that journal nothing.
func TestSetNamesOnTheWire(t *testing.T) {
	d := start(t, t.TempDir(), "demo")
	nc := connectTo(t, d)
	var r messages.Reply
	if err := json.Unmarshal(mustOKRaw(t, nc, `{"room":"Bedroom","aliases":["bedroom lamp","bedside"]}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Changes == nil || r.Changes.Summary() != "room (none) → bedroom, +alias bedroom lamp, +alias bedside" {
		t.Fatalf("changes %+v", r.Changes)
	}
	r = messages.Reply{}
	if err := json.Unmarshal(mustOKRaw(t, nc, `{"aliases":["bedside"]}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Changes == nil || r.Changes.Summary() != "-alias bedroom lamp" {
		t.Fatalf("changes %+v", r.Changes)
	}
	seq := lastSeq(t, nc)
	for body, says := range map[string]string{
		`{}`:                `set_names sets nothing`,
		`{"room":"a/b"}`:    `room "a/b" holds '/'`,
		`{"aliases":[" "]}`: `aliases[0] " " is only spaces`,
	} {
		if rep := requestTo(t, nc, "demo", messages.VerbSetNames, body); rep.Code != "400" || !strings.Contains(rep.Header, says) {
			t.Errorf("%s: %s %s, want a 400 that says %s", body, rep.Code, rep.Header, says)
		}
	}
	if got := lastSeq(t, nc); got != seq {
		t.Errorf("refused set_names journaled events %d to %d", seq+1, got)
	}
	var g messages.GetReply
	if err := json.Unmarshal(requestTo(t, nc, "demo", messages.VerbGet, `{}`).Raw, &g); err != nil || g.Room != "bedroom" || !slices.Equal(g.Aliases, []string{"bedside"}) {
		t.Errorf("get: %v room %q aliases %q", err, g.Room, g.Aliases)
	}
}

// mustOKRaw is a set_names to demo that must succeed.
func mustOKRaw(t *testing.T, nc *nats.Conn, body string) []byte {
	t.Helper()
	r := requestTo(t, nc, "demo", messages.VerbSetNames, body)
	if r.Code != "" {
		t.Fatalf("set_names %s: %s %s", body, r.Code, r.Header)
	}
	return r.Raw
}
