package past_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/messages"
)

var t0 = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// journalOf runs inputs through a machine the way the actor does and
// returns the records the stream would hold.
func journalOf(t *testing.T, inputs []string) []past.Record {
	t.Helper()
	m := machine.New()
	defer m.Close()
	var recs []past.Record
	seq := uint64(0)
	for i, body := range inputs {
		seq++
		typ := "fired"
		if strings.Contains(body, `"op"`) {
			typ = "config"
		}
		in := past.Record{Seq: seq, Subject: "lumen.k.evt.in." + typ, Data: []byte(body), Time: t0.Add(time.Duration(i) * time.Second)}
		recs = append(recs, in)
		_, outs := past.Compute(m, "k", past.DecodeInput("k", in), past.TimedOut{})
		for _, o := range outs {
			seq++
			var env messages.Envelope
			if err := messages.DecodeEnvelope(o, &env); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, past.Record{Seq: seq, Subject: "lumen.k.evt.out." + env.Type, Data: o, Time: in.Time})
		}
	}
	return recs
}

var inputs = []string{
	`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[{"from":"*","on":"click","to":"red","action":"setData('n', (getData('n') || 0) + 1); setData('r', random())"}]}`,
	`{"transition":"click"}`,
	`{"transition":"click"}`,
	`{"transition":"nothing"}`,
}

func fold(t *testing.T, recs []past.Record) (*past.Fold, []*past.Applied, error) {
	t.Helper()
	f := &past.Fold{Light: "k", M: machine.New()}
	t.Cleanup(f.M.Close)
	for _, r := range recs {
		if err := f.Add(r); err != nil {
			return f, nil, err
		}
	}
	open, err := f.Finish()
	return f, open, err
}

func TestFoldReproducesTheJournal(t *testing.T) {
	recs := journalOf(t, inputs)
	var mismatches []string
	f := &past.Fold{Light: "k", M: machine.New(), OnApplied: func(a *past.Applied) error {
		if _, why := a.Mismatch(); why != "" {
			mismatches = append(mismatches, why)
		}
		return nil
	}}
	defer f.M.Close()
	for _, r := range recs {
		if err := f.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	open, err := f.Finish()
	if err != nil || len(open) > 0 || len(mismatches) > 0 || len(f.Pending) > 0 {
		t.Fatalf("fold: err %v, partial %+v, mismatches %v, pending %v", err, open, mismatches, f.Pending)
	}
	if f.M.State() != "red" || f.Applied != recs[len(recs)-2].Seq {
		t.Fatalf("state %s applied %d", f.M.State(), f.Applied)
	}
}

func TestFoldFindsPartialOutputsAndPendingInputs(t *testing.T) {
	recs := journalOf(t, inputs[:3])
	// The process died after the first output of the last input.
	cut := recs[:len(recs)-1]
	lastIn := recs[len(recs)-1]
	for i := len(recs) - 1; i >= 0; i-- {
		if strings.Contains(recs[i].Subject, ".in.") {
			lastIn = recs[i]
			break
		}
	}
	// … and one more input arrived that was never applied.
	cut = append(cut, past.Record{Seq: 100, Subject: "lumen.k.evt.in.fired", Data: []byte(`{"transition":"click"}`), Time: t0})
	f, open, err := fold(t, cut)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 || open[0].Input.Seq != lastIn.Seq || !slices.Equal(open[0].Missing(), []int{len(open[0].Computed) - 1}) {
		t.Fatalf("want input %d missing its last output, got %+v", lastIn.Seq, open)
	}
	if len(f.Pending) != 1 || f.Pending[0].Seq != 100 {
		t.Fatalf("pending %+v", f.Pending)
	}
}

// A journal that refused some outputs of a group and stored later ones
// leaves gaps: the fold still applies every input, reports each one
// missing outputs, and checks outputs recorded late, after recovery.
func TestFoldToleratesGapsInAGroup(t *testing.T) {
	recs := journalOf(t, inputs)
	// inputs[1] (a click) has outputs var n, var r, state; inputs[2] too.
	var in1, in2 uint64
	for _, r := range recs {
		if strings.Contains(r.Subject, ".in.") {
			if in1 == 0 && r.Seq > 1 {
				in1 = r.Seq
			} else if in1 != 0 && in2 == 0 {
				in2 = r.Seq
			}
		}
	}
	var kept, late []past.Record
	for _, r := range recs {
		var env messages.Envelope
		_ = messages.DecodeEnvelope(r.Data, &env)
		switch {
		case env.Cause == in1 && strings.HasSuffix(env.ID, ":1"): // one output of input 1 lost
			late = append(late, r)
		case env.Cause == in2: // every output of input 2 lost
			late = append(late, r)
		default:
			kept = append(kept, r)
		}
	}
	f, open, err := fold(t, kept)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 2 || open[0].Input.Seq != in1 || open[1].Input.Seq != in2 {
		t.Fatalf("want inputs %d and %d partial, got %+v", in1, in2, open)
	}
	if !slices.Equal(open[0].Missing(), []int{1}) || len(open[1].Missing()) != len(open[1].Computed) {
		t.Fatalf("missing: %v and %v of %d", open[0].Missing(), open[1].Missing(), len(open[1].Computed))
	}
	if f.M.State() != "red" || len(f.Pending) != 0 {
		t.Fatalf("state %s, pending %v", f.M.State(), f.Pending)
	}

	// Recovery journals the missing outputs after the later ones; a
	// second fold reads them late and checks them.
	var checked int
	f2 := &past.Fold{Light: "k", M: machine.New(), OnLate: func(a *past.Applied) error {
		checked++
		if _, why := a.Mismatch(); why != "" {
			t.Errorf("late output: %s", why)
		}
		return nil
	}}
	defer f2.M.Close()
	seq := kept[len(kept)-1].Seq
	for i := range late {
		seq++
		late[i].Seq = seq
	}
	for _, r := range append(kept, late...) {
		if err := f2.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if open, err := f2.Finish(); err != nil || len(open) != 0 {
		t.Fatalf("after recovery: partial %+v, %v", open, err)
	}
	if checked != len(late) {
		t.Fatalf("%d late outputs checked, want %d", checked, len(late))
	}
}

func TestFoldNamesAnAlteredOutput(t *testing.T) {
	recs := journalOf(t, inputs)
	var altered uint64
	for i, r := range recs {
		if strings.HasSuffix(r.Subject, ".out.var") {
			recs[i].Data = bytes.Replace(r.Data, []byte(`"value":`), []byte(`"value":9`), 1)
			altered = r.Seq
			break
		}
	}
	var got uint64
	f := &past.Fold{Light: "k", M: machine.New(), OnApplied: func(a *past.Applied) error {
		if seq, why := a.Mismatch(); why != "" && got == 0 {
			got = seq
		}
		return nil
	}}
	defer f.M.Close()
	for _, r := range recs {
		if err := f.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	if got != altered || altered == 0 {
		t.Fatalf("mismatch named %d, altered %d", got, altered)
	}
}

func TestDecodeInput(t *testing.T) {
	stream := t0.Add(time.Hour)
	bare := past.DecodeInput("k", past.Record{Seq: 7, Subject: "lumen.k.evt.in.fired", Data: []byte(`{"transition":"x"}`), Time: stream})
	if bare.Type != "fired" || !bare.Time.Equal(stream) || bare.Reject != "" || string(bare.Data) != `{"transition":"x"}` {
		t.Fatalf("bare payload: %+v", bare)
	}
	env := messages.Envelope{V: 1, ID: "a", Type: "fired", Light: "other", Time: t0, Data: json.RawMessage(`{"transition":"x"}`)}
	wrong := past.DecodeInput("k", past.Record{Seq: 8, Subject: "lumen.k.evt.in.fired", Data: messages.AppendEnvelope(nil, &env), Time: stream})
	if wrong.Reject == "" || !wrong.Time.Equal(t0) {
		t.Fatalf("envelope for another light must be rejected: %+v", wrong)
	}
}
