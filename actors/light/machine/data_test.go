package machine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// The seed's Bitcoin source as runs of the source: each data input keeps
// btc_price_prev, stores btc_price and fires bitcoin_updated, and the
// rules compare the two.
const bitcoinLight = `{"op":"apply",
	"states":[{"name":"off","r":0,"g":0,"b":0},{"name":"up","r":0,"g":255,"b":0},{"name":"down","r":255,"g":0,"b":0}],
	"rules":[
		{"from":"*","on":"bitcoin_updated","to":"up","condition":"getData('btc_price_prev') !== undefined && getData('btc_price') > getData('btc_price_prev')"},
		{"from":"*","on":"bitcoin_updated","to":"down","condition":"getData('btc_price_prev') !== undefined && getData('btc_price') <= getData('btc_price_prev')"}],
	"sources":[{"name":"bitcoin","interval_ms":60000,"fetch":{"tool":"fetch_json","args":{"url":"https://api.example.com/btc"}},"store":{"btc_price":"result.body.price"},"fires":"bitcoin_updated"},
		{"name":"door","type":"nats","subject":"home.door","store":{"who":"result.who","at":"result.at"}}]}`

func TestDataInput(t *testing.T) {
	l := newLight(t)
	l.config(bitcoinLight)
	// The first run has nothing to keep as _prev: no rule holds.
	if r := l.ok(messages.InData, `{"source":"bitcoin","vars":{"btc_price":66950}}`); r.State != "off" {
		t.Fatalf("first run: state %s", r.State)
	}
	if r := l.ok(messages.InData, `{"source":"bitcoin","vars":{"btc_price":67012.5}}`); r.State != "up" || !r.Changed {
		t.Fatalf("price up: state %s", r.State)
	}
	if r := l.ok(messages.InData, `{"source":"bitcoin","vars":{"btc_price":60000}}`); r.State != "down" {
		t.Fatalf("price down: state %s", r.State)
	}
	// A source that fires nothing only stores, several variables by name.
	l.ok(messages.InData, `{"source":"door","vars":{"who":"Ann","at":"08:00"}}`)
	l.ok(messages.InData, `{"source":"door","vars":{"who":"Bob","at":"09:00"}}`)
	l.golden("data_bitcoin")

	model := l.m.Model()
	for name, want := range map[string]string{"btc_price": "60000", "btc_price_prev": "67012.5", "who": `"Bob"`, "who_prev": `"Ann"`, "at_prev": `"08:00"`} {
		if got := string(model.Vars[name]); got != want {
			t.Errorf("var %s = %s, want %s", name, got, want)
		}
	}
	// The runs' times are the sources' last runs (inputs are a second
	// apart: the third and the fifth data inputs, #4 and #6).
	if got, want := model.LastRuns["bitcoin"], t0.Add(3*time.Second); !got.Equal(want) {
		t.Errorf("last run of bitcoin %v, want %v", got, want)
	}
	if got, want := model.LastRuns["door"], t0.Add(5*time.Second); !got.Equal(want) {
		t.Errorf("last run of door %v, want %v", got, want)
	}
}

// A run is applied as a whole or not at all, and only for a source that
// exists.
func TestDataInputRejected(t *testing.T) {
	tests := []struct {
		name, payload string
		code          int
		msg           string
	}{
		{"unknown source", `{"source":"nope","vars":{"x":1}}`, 404, `source "nope" does not exist`},
		{"no source", `{"vars":{"x":1}}`, 400, "source is empty"},
		{"one bad value", `{"source":"door","vars":{"at":"08:00","who":01}}`, 400, "data:"},
		{"empty variable name", `{"source":"door","vars":{"":1,"who":"Ann"}}`, 400, "empty name"},
		{"unknown field", `{"source":"door","values":{"who":"Ann"}}`, 400, "values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			l.config(bitcoinLight)
			l.ok(messages.InData, `{"source":"door","vars":{"who":"Zoe","at":"07:00"}}`)
			before := mustJSON(t, l.m.Model())
			r := l.apply(messages.InData, tt.payload)
			if r.Err == nil || r.Err.Code != tt.code || !strings.Contains(r.Err.Error, tt.msg) {
				t.Fatalf("got %+v, want %d with %q", r.Err, tt.code, tt.msg)
			}
			if after := mustJSON(t, l.m.Model()); after != before {
				t.Fatalf("a refused run changed the model:\n%s\n%s", before, after)
			}
		})
	}
}

// Last runs survive a snapshot; a redefined or deleted source forgets
// its own (a new definition runs at once), an unchanged one keeps it.
func TestDataLastRuns(t *testing.T) {
	l := newLight(t)
	l.config(bitcoinLight)
	l.ok(messages.InData, `{"source":"bitcoin","vars":{"btc_price":1}}`)
	l.ok(messages.InData, `{"source":"door","vars":{"who":"Ann"}}`)

	snap, err := l.m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := machine.Restore(snap)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if got, want := mustJSON(t, m2.Model().LastRuns), mustJSON(t, l.m.Model().LastRuns); got != want || !strings.Contains(got, "bitcoin") {
		t.Fatalf("restored last runs %s, want %s", got, want)
	}

	// Re-applying the same configuration keeps both.
	l.config(bitcoinLight)
	if n := len(l.m.Model().LastRuns); n != 2 {
		t.Fatalf("apply of the same sources: %d last runs, want 2", n)
	}
	// Redefining door (another subject) forgets its run only.
	l.config(`{"op":"create_source","sources":[{"name":"door","type":"nats","subject":"home.door2","store":{"who":"result.who"}}]}`)
	if runs := l.m.Model().LastRuns; len(runs) != 1 || runs["bitcoin"].IsZero() {
		t.Fatalf("after redefining door: %v", runs)
	}
	l.config(`{"op":"delete_source","name":"bitcoin"}`)
	if runs := l.m.Model().LastRuns; runs != nil {
		t.Fatalf("after deleting bitcoin: %v", runs)
	}
}
