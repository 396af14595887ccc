package machine_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// t0 is the time of the first input of every test light.
var t0 = time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)

// light drives a machine with numbered inputs one second apart and keeps
// a transcript of inputs and outputs.
type light struct {
	t   *testing.T
	m   *machine.Machine
	seq uint64
	now time.Time
	log bytes.Buffer
}

func newLight(t *testing.T, opts ...machine.Option) *light {
	t.Helper()
	m := machine.New(opts...)
	t.Cleanup(m.Close)
	return &light{t: t, m: m, now: t0}
}

// next returns the event of the next input, one second after the last.
func (l *light) next() machine.Event {
	l.seq++
	if l.seq > 1 {
		l.now = l.now.Add(time.Second)
	}
	return machine.Event{Seq: l.seq, Time: l.now}
}

// apply applies an input and logs it with its outputs.
func (l *light) apply(typ, payload string) machine.Result {
	l.t.Helper()
	return l.applyEvent(l.next(), typ, payload)
}

func (l *light) applyEvent(ev machine.Event, typ, payload string) machine.Result {
	l.t.Helper()
	r := l.m.Apply(ev, typ, []byte(payload))
	fmt.Fprintf(&l.log, "> #%d %s %s %s\n", ev.Seq, ev.Time.Format(time.RFC3339Nano), typ, compact(payload))
	for _, o := range r.Outputs {
		fmt.Fprintf(&l.log, "< %s %s\n", o.Type, mustJSON(l.t, o.Data))
	}
	if len(r.Outputs) == 0 {
		l.t.Fatalf("%s %s: no output", typ, payload)
	}
	return r
}

// ok applies an input that must not be rejected.
func (l *light) ok(typ, payload string) machine.Result {
	l.t.Helper()
	r := l.apply(typ, payload)
	if r.Err != nil {
		l.t.Fatalf("%s %s: rejected: %d %s", typ, payload, r.Err.Code, r.Err.Error)
	}
	return r
}

func (l *light) fire(transition string) machine.Result {
	l.t.Helper()
	return l.ok(messages.InFired, `{"transition":"`+transition+`"}`)
}

func (l *light) config(payload string) machine.Result {
	l.t.Helper()
	return l.ok(messages.InConfig, payload)
}

// golden compares the transcript with testdata/<name>.golden.
func (l *light) golden(name string) {
	l.t.Helper()
	golden(l.t, name, l.log.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func compact(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return strings.Join(strings.Fields(s), " ")
	}
	return b.String()
}

// outputs renders a result's outputs as "type data" lines.
func outputs(t testing.TB, r machine.Result) []string {
	t.Helper()
	out := make([]string, len(r.Outputs))
	for i, o := range r.Outputs {
		out[i] = o.Type + " " + mustJSON(t, o.Data)
	}
	return out
}

func equalLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("outputs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// applyConfig wraps an ApplyRequest as an apply config payload.
func applyConfig(t testing.TB, req messages.ApplyRequest) string {
	t.Helper()
	return mustJSON(t, struct {
		Op string `json:"op"`
		messages.ApplyRequest
	}{messages.OpApply, req})
}

// restored returns a machine restored from l's snapshot, closed when the
// test ends.
func (l *light) restored() *machine.Machine {
	l.t.Helper()
	snap, err := l.m.Snapshot()
	if err != nil {
		l.t.Fatal(err)
	}
	m, err := machine.Restore(snap)
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(m.Close)
	return m
}
