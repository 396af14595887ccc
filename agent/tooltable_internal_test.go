package agent

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// verbLight records the verb each call sends and answers every one.
type verbLight struct{ verb string }

func (l *verbLight) Command(_ context.Context, verb string, _ []byte) ([]byte, error) {
	l.verb = verb
	switch verb {
	case messages.VerbGet:
		return []byte(`{"ok":true,"light":"k","state":"off","states":[{"name":"off","r":0,"g":0,"b":0}]}`), nil
	case messages.VerbWhatIf:
		return []byte(`{"ok":true}`), nil
	}
	return []byte(`{"ok":true,"seq":1,"state":"red"}`), nil
}

// What the agent knows of each of its tools, as the model and a person
// see it: the specs the model reads (names, descriptions, schemas,
// tiers), whether a call reads only, may run twice, may answer by
// itself, the verb it sends the light and its confirmation sentence.
// Golden, so that a change to any of it is seen.
func TestToolFacts(t *testing.T) {
	type fact struct {
		Spec         Spec
		ReadOnly     bool
		Idempotent   bool
		Direct       bool
		Verb         string
		Confirmation string
		Replaces     string `json:",omitempty"`
	}
	var facts []fact
	args := json.RawMessage(`{"name":"x","transition":"t","rules":[{"from":"a","on":"b","to":"c"}],"cron":"0 19 * * *","fires":"t","code":"return 1","question":"q","message":"m","ids":["r1"],"poll_interval_ms":1000,"type":"internal","tracks":"state_duration","interval_ms":10000}`)
	for _, s := range Specs() {
		l := &verbLight{}
		tl := &Tools{Light: l}
		res, _ := tl.Run(context.Background(), s.Name, args)
		f := fact{Spec: s, ReadOnly: readOnly(s.Name), Idempotent: idempotent(s.Name), Direct: tools()[s.Name].direct, Verb: l.verb,
			Confirmation: Confirmation(messages.ToolStep{Tool: s.Name, Args: args, Result: res, OK: true})}
		if r, ok := replacerOf(s.Name); ok {
			f.Replaces = r.what + " (deleted by " + r.delete + ")"
		}
		facts = append(facts, f)
	}
	got, err := json.MarshalIndent(facts, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("the tools' facts changed; if on purpose, run go test -run TestToolFacts -update\n got %s", got)
	}
}
