package journal_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/nats/journal"
)

// A slice comes back byte for byte, whatever its events hold: escaped
// characters, pretty JSON, a JSON string, no JSON at all.
func TestSliceRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 8, 0, 0, 123, time.UTC)
	bodies := []string{
		`{"v":1,"id":"k:1:0","type":"var","light":"k","time":"2026-11-25T08:00:00Z","cause":1,"data":{"name":"x","value":"a < b & c"}}`,
		"{\n  \"transition\": \"tick\"\n}",
		`"abc"`,
		`not json at all`,
		` {"transition":"spaced"} `,
	}
	s := &journal.Slice{Light: "k", Snapshot: []byte(`{"applied":3,"machine":{}}`)}
	for i, b := range bodies {
		s.Events = append(s.Events, journal.Msg{Seq: uint64(10 + i), Subject: "lumen.k.evt.in.fired", Data: []byte(b), Time: t0})
	}
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := journal.ReadSlice(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Light != "k" || len(got.Events) != len(bodies) {
		t.Fatalf("read back %+v", got)
	}
	for i, m := range got.Events {
		if string(m.Data) != bodies[i] || m.Seq != uint64(10+i) || !m.Time.Equal(t0) {
			t.Errorf("event %d: %q at %d %v, want %q", i, m.Data, m.Seq, m.Time, bodies[i])
		}
	}
	if last, err := got.LastMsg(context.Background(), "lumen.k.evt.>"); err != nil || last.Seq != 14 {
		t.Errorf("LastMsg: %v %v", last.Seq, err)
	}
	for _, bad := range []string{"", "{}\n", `{"format":"lumen-journal-slice","version":1,"light":"k"}` + "\n" + `{"seq":5}` + "\n" + `{"seq":4}` + "\n"} {
		if _, err := journal.ReadSlice(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadSlice(%q): no error", bad)
		}
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		filter, subject string
		want            bool
	}{
		{"lumen.k.evt.>", "lumen.k.evt.in.fired", true},
		{"lumen.k.evt.>", "lumen.k.evt", false},
		{"lumen.*.evt.out.state", "lumen.k.evt.out.state", true},
		{"lumen.k.evt.out.state", "lumen.k.evt.out.state.x", false},
		{"lumen.k.evt.out.state", "lumen.kk.evt.out.state", false},
		{"lumen.k", "lumen.k", true},
	} {
		if got := journal.Matches(tc.filter, tc.subject); got != tc.want {
			t.Errorf("Matches(%q, %q) = %v", tc.filter, tc.subject, got)
		}
	}
}
