package agent

import (
	"context"
	"fmt"
	"testing"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// BenchmarkRestore is a start's restore of a light with a few sessions
// in a journal mostly of other lights' events, reading from the mark and
// from the journal's start: the difference is what the mark saves (and,
// in a daemon, the message blocks the server loads for the read).
func BenchmarkRestore(b *testing.B) {
	const others = 100_000
	r := newMarkRig(b)
	r.cfg.Logf = func(string, ...any) {}
	ctx := context.Background()
	var last *journal.Pending
	for i := range others {
		p, err := r.j.AppendAsync(subject.Out("x", messages.OutAgent), fmt.Appendf(nil, `{"n":%d,"pad":"%0200d"}`, i, i))
		if err != nil {
			b.Fatal(err)
		}
		last = p
		if i%3000 == 0 {
			r.appendSteps(fmt.Sprintf("s%d", i/3000), messages.OutAgentData{Step: 1, Kind: messages.AgentKindAsk, Text: "hi"},
				messages.OutAgentData{Step: 2, Kind: messages.AgentKindEnd, Status: messages.AgentDone, Text: "hello"})
		}
	}
	if _, err := last.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	m := &Manager{cfg: r.cfg}
	if _, err := m.restore(); err != nil { // saves the sessions and the mark
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mark bool
	}{{"from the mark", true}, {"from the start", false}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				if !tc.mark {
					if err := r.j.DeleteRecord(ctx, MarkKey("k")); err != nil {
						b.Fatal(err)
					}
				}
				res, err := m.restore()
				if err != nil || len(res.states) != others/3000+1 {
					b.Fatalf("restore: %d sessions, %v", len(res.states), err)
				}
				events = res.events
			}
			b.ReportMetric(float64(events), "events/op")
		})
	}
}
