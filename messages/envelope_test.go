package messages_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n got: %s\nwant: %s", name, got, want)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var t0 = time.Date(2026, 11, 22, 2, 22, 57, 123000000, time.UTC)

func TestWireGolden(t *testing.T) {
	rule := "r2"
	tests := []struct {
		name string
		env  messages.Envelope
	}{
		{"in_fired.json", messages.Envelope{V: 1, ID: "cli-1", Type: messages.InFired, Light: "kitchen", Time: t0,
			Data: mustJSON(t, messages.InFiredData{Transition: "button_click", Source: "cli"})}},
		{"in_config_append.json", messages.Envelope{V: 1, ID: "cli-2", Type: messages.InConfig, Light: "kitchen", Time: t0,
			Data: mustJSON(t, messages.InConfigData{Op: messages.OpAppendRules, Rules: []messages.Rule{
				{From: "*", On: "button_hold", To: "off", Priority: 100, Enabled: true},
				{From: "off", On: "button_click", To: "red", Condition: "getData('counter') === undefined", Action: "setData('counter', 2)", Enabled: true},
			}})}},
		{"in_config_state.json", messages.Envelope{V: 1, ID: "cli-3", Type: messages.InConfig, Light: "kitchen", Time: t0,
			Data: mustJSON(t, messages.InConfigData{Op: messages.OpCreateState, States: []messages.State{
				{Name: "red", R: messages.Num(255), G: messages.Num(0), B: messages.Num(0)},
				{Name: "pulse", R: messages.Expr("sin(frame*0.1)*127+128"), G: messages.Num(0), B: messages.Num(10), Speed: ptr(33), Description: "a slow red pulse"},
			}})}},
		{"in_data.json", messages.Envelope{V: 1, ID: "source-1", Type: messages.InData, Light: "kitchen", Time: t0, By: "source:bitcoin",
			Data: mustJSON(t, messages.InDataData{Source: "bitcoin", Vars: map[string]json.RawMessage{"btc_price": json.RawMessage("67012.5")}})}},
		{"out_state.json", messages.Envelope{V: 1, ID: messages.OutputID("kitchen", 42, 1), Type: messages.OutState, Light: "kitchen", Time: t0, Cause: 42,
			Data: mustJSON(t, messages.OutStateData{From: "off", To: "red", Rule: &rule, Transition: "button_click", Changed: true})}},
		{"out_var.json", messages.Envelope{V: 1, ID: messages.OutputID("kitchen", 42, 0), Type: messages.OutVar, Light: "kitchen", Time: t0, Cause: 42,
			Data: mustJSON(t, messages.OutVarData{Name: "counter", Value: json.RawMessage("2")})}},
		{"out_timer.json", messages.Envelope{V: 1, ID: messages.OutputID("kitchen", 43, 0), Type: messages.OutTimer, Light: "kitchen", Time: t0, Cause: 43,
			Data: mustJSON(t, messages.OutTimerData{Op: messages.TimerSet, Name: "fade", Deadline: t0.Add(5 * time.Second)})}},
		{"out_error.json", messages.Envelope{V: 1, ID: messages.OutputID("kitchen", 44, 0), Type: messages.OutError, Light: "kitchen", Time: t0, Cause: 44,
			Data: mustJSON(t, messages.OutErrorData{Code: 404, Error: `rule r5 goes to unknown state "blue"; create the state first`, Kind: messages.ErrorRejected})}},
		{"out_ignored.json", messages.Envelope{V: 1, ID: messages.OutputID("kitchen", 45, 0), Type: messages.OutIgnored, Light: "kitchen", Time: t0, Cause: 45,
			Data: mustJSON(t, messages.OutIgnoredData{Transition: "button_double_click", Reason: "no rule matches button_double_click in state off"})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := messages.AppendEnvelope(nil, &tt.env)
			golden(t, tt.name, append(got, '\n'))
			var back messages.Envelope
			if err := messages.DecodeEnvelope(got, &back); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if again := messages.AppendEnvelope(nil, &back); !bytes.Equal(again, got) {
				t.Errorf("round trip changed bytes:\n%s\n%s", got, again)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// The hand-written decoder must agree with encoding/json on every field.
func TestDecodeEnvelopeMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		`{"v":1,"id":"a","type":"fired","light":"x","time":"2026-11-22T02:22:57.123Z","data":{"transition":"t"}}`,
		` { "data" : [1, {"a":"\"}"}, null, true, -1.5e3] , "cause":7, "v":1, "extra":{"x":[]}, "id":"k\u00e9\"y", "type":"state","light":"l","time":"2026-11-22T03:22:57+01:00" } `,
		`{"v":1,"id":"a","type":"t","light":"x","time":"2026-11-22T02:22:57Z","data":"str"}`,
		`{"v":1,"id":"a","type":"var","light":"x","time":"2026-11-22T02:22:57Z","by":"agent:s1:3","data":{}}`,
	}
	for _, in := range inputs {
		var a, b messages.Envelope
		if err := messages.DecodeEnvelope([]byte(in), &a); err != nil {
			t.Fatalf("DecodeEnvelope(%s): %v", in, err)
		}
		type plain messages.Envelope // no custom unmarshaler
		var p plain
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatal(err)
		}
		b = messages.Envelope(p)
		if a.V != b.V || a.ID != b.ID || a.Type != b.Type || a.Light != b.Light || !a.Time.Equal(b.Time) || a.Cause != b.Cause || a.By != b.By || !bytes.Equal(a.Data, b.Data) {
			t.Errorf("mismatch for %s:\n got %+v\nwant %+v", in, a, b)
		}
	}
}

func TestDecodeEnvelopeErrors(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `{"v":1,`, `{"v":-1}`, `{"id":1}`, `{"time":"yesterday"}`, `{"data":{"a":}}`,
		`{"data":[1,2}`, `{"v":1} x`, `{"data":"unterminated}`, `{"data":tru}`, `{"data":1.2.3}`,
	} {
		var e messages.Envelope
		err := messages.DecodeEnvelope([]byte(in), &e)
		if !errors.Is(err, messages.ErrMalformed) {
			t.Errorf("DecodeEnvelope(%q) = %v, want ErrMalformed", in, err)
		}
	}
}

func TestIsEnvelope(t *testing.T) {
	if messages.IsEnvelope([]byte(`{"transition":"button_click"}`)) {
		t.Error("a bare payload is not an envelope")
	}
	if !messages.IsEnvelope([]byte(`{"v":1,"id":"a","type":"fired","light":"x","time":"2026-11-22T02:22:57Z","data":{}}`)) {
		t.Error("an envelope is an envelope")
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"v":1,"id":"a","type":"fired","light":"x","time":"2026-11-22T02:22:57.123Z","cause":3,"data":{"transition":"t"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var e messages.Envelope
		if messages.DecodeEnvelope(b, &e) != nil {
			return
		}
		// Whatever decodes must re-encode to something that decodes the same.
		out := messages.AppendEnvelope(nil, &e)
		var back messages.Envelope
		if err := messages.DecodeEnvelope(out, &back); err != nil {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
	})
}
