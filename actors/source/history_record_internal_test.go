package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// An internal source records the history it follows, and a restart reads
// the journal only after the record: with every state output before it
// purged from the journal, the sources still count them.
func TestInternalHistoryRecorded(t *testing.T) {
	r := newRig(t)
	r.start()
	r.request("create_state", `{"name":"red","r":255,"g":0,"b":0}`)
	r.request("append_rules", `{"rules":[{"from":"*","on":"go","to":"red"}]}`)
	for range 3 {
		r.request("fire", `{"transition":"go"}`)
	}
	r.request("create_source", `{"name":"n","type":"internal","tracks":"transitions_today","interval_ms":100,"store":{"today":"result"}}`)
	today := func(name string) any {
		vars, _ := r.request("get", "{}")["vars"].(map[string]any)
		return vars[name]
	}
	for end := time.Now().Add(10 * time.Second); today("today") != 3.0; r.tick() {
		if time.Now().After(end) {
			t.Fatalf("transitions_today = %v, want 3", today("today"))
		}
	}
	ctx := context.Background()
	last, err := r.j.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A record is due historySaveEvery after the last.
	if !r.clock.WaitArmed(r.clock.Now().Add(tickEvery), 10*time.Second) {
		t.Fatal("the source manager does not check its schedules")
	}
	r.clock.Advance(historySaveEvery)
	var rec datasource.History
	for end := time.Now().Add(10 * time.Second); rec.Seq == 0; r.tick() {
		if b, err := r.j.Record(ctx, HistoryKey("k")); err == nil && b != nil {
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
		}
		if time.Now().After(end) {
			t.Fatal("no history recorded")
		}
	}
	if rec.Seq > last || rec.TransitionsToday(r.clock.Now(), nil) != 3 {
		t.Fatalf("recorded %+v; want the three transitions, at most at %d", rec, last)
	}
	r.stop()

	// The journal forgets the outputs; the record keeps them.
	if err := r.j.Purge(ctx, subject.Out("k", messages.OutState), last+1); err != nil {
		t.Fatal(err)
	}
	r.start()
	defer r.stop()
	r.request("fire", `{"transition":"go"}`)
	r.request("create_source", `{"name":"again","type":"internal","tracks":"transitions_today","interval_ms":100,"store":{"today2":"result"}}`)
	for end := time.Now().Add(10 * time.Second); today("today2") != 4.0; r.tick() {
		if time.Now().After(end) {
			t.Fatalf("after a restart transitions_today = %v, want the 3 recorded and the new one", today("today2"))
		}
	}
}

// fakeRecords is a journal's records for loadHistory.
type fakeRecords struct {
	rec  []byte
	err  error
	last uint64
}

func (f fakeRecords) Record(context.Context, string) ([]byte, error)   { return f.rec, f.err }
func (f fakeRecords) SaveRecord(context.Context, string, []byte) error { return nil }
func (f fakeRecords) LastSeq(context.Context) (uint64, error)          { return f.last, nil }
func (f fakeRecords) Room() error                                      { return nil }

// A record that cannot be used is said so, and the journal is read from
// its first event.
func TestLoadHistory(t *testing.T) {
	tests := []struct {
		name    string
		records fakeRecords
		seq     uint64
		log     string
	}{
		{"none: a data dir of before", fakeRecords{err: fmt.Errorf("%w: no record", journal.ErrNotFound), last: 10}, 0, ""},
		{"recorded", fakeRecords{rec: []byte(`{"seq":7,"recent":[{"at":"2026-11-24T12:00:00Z","from":"off","to":"red","via":"go"}]}`), last: 10}, 7, ""},
		{"unreadable", fakeRecords{rec: []byte(`{"seq":`), last: 10}, 0, "unreadable"},
		{"ahead of the journal", fakeRecords{rec: []byte(`{"seq":70}`), last: 10}, 0, "ahead of the journal"},
		{"the journal fails", fakeRecords{err: errors.New("boom"), last: 10}, 0, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs []string
			h := loadHistory(context.Background(), tt.records, "k", func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
			if h.Seq != tt.seq {
				t.Fatalf("seq %d, want %d", h.Seq, tt.seq)
			}
			if got := strings.Join(logs, "\n"); (tt.log == "") != (got == "") || !strings.Contains(got, tt.log) {
				t.Fatalf("logged %q, want %q", got, tt.log)
			}
		})
	}
}
