package bench

import (
	"context"
	"encoding/json"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// pastSet is a running daemon whose bench light has journaled a number
// of ticks (each an input and two outputs), snapshots on (every 1000
// inputs, the default).
type pastSet struct {
	d      *daemon
	inputs int
	events uint64 // the stream's last sequence
}

var (
	pastMu   sync.Mutex
	pastSets = map[int]*pastSet{}
)

func pastDataSet(b *testing.B, inputs int) *pastSet {
	pastMu.Lock()
	defer pastMu.Unlock()
	if s := pastSets[inputs]; s != nil {
		return s
	}
	d, _, last := tickedDaemon(b, "lumen-bench-past-", inputs)
	s := &pastSet{d: d, inputs: inputs, events: last}
	pastSets[inputs] = s
	return s
}

// replayRate runs `lumen replay --quiet` against the running daemon and
// returns its wall time: the baseline of why and whatif.
func replayRate(b *testing.B, s *pastSet) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, lumenBin(b), "replay", "--light", benchLight, "--quiet", "--server", s.d.URL)
	cmd.SysProcAttr = childAttr()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("lumen replay: %v\n%s", err, out)
	}
	return time.Since(t0)
}

// pastRequest sends a light verb whose answer replays the journal.
func pastRequest(b *testing.B, nc *nats.Conn, verb string, body any, out any) {
	data, _ := json.Marshal(body)
	m, err := nc.Request(subject.Cmd(benchLight, verb), data, 3*time.Minute)
	if err != nil {
		b.Fatalf("%s: %v", verb, err)
	}
	if err := json.Unmarshal(m.Data, out); err != nil {
		b.Fatalf("%s: %s", verb, m.Data)
	}
}

// whyEvents is the size of the journal BenchmarkWhy explains: a third
// of it inputs.
const whyEvents = 1_000_000

// BenchmarkWhy times `why` of the bench light's current state on a
// journal of about 1,000,000 events (snapshots on), asked of the running
// daemon over NATS. One op is one explanation; its baseline is
// `lumen replay` of the whole journal in the same run (why-vs-replay is
// the fraction of the replay's time an explanation takes).
func BenchmarkWhy(b *testing.B) {
	s := pastDataSet(b, whyEvents/3)
	nc := connect(b, s.d.URL)
	var w messages.WhyReply
	pastRequest(b, nc, messages.VerbWhy, messages.WhyRequest{}, &w)
	if w.Rule == nil || len(w.Reads) != 1 || w.Reads[0].SetBy == nil {
		b.Fatalf("why: %+v", w)
	}
	b.ResetTimer()
	for b.Loop() {
		pastRequest(b, nc, messages.VerbWhy, messages.WhyRequest{}, &w)
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.StopTimer()
	replay := replayRate(b, s)
	b.ReportMetric(float64(s.events), "events")
	b.ReportMetric(float64(per.Milliseconds()), "ms/why")
	b.ReportMetric(float64(replay.Milliseconds()), "ms/replay")
	b.ReportMetric(per.Seconds()/replay.Seconds(), "why-vs-replay")
}

// whatIfInputs is the window BenchmarkWhatIf replays.
const whatIfInputs = 100_000

// BenchmarkWhatIf times `whatif` of a configuration that counts down
// instead of up over 100,000 recorded inputs, against `lumen replay` of
// the same journal in the same run: whatif-vs-replay is its rate of
// inputs over the replay's (the goal is at least 0.5). "all" is a light
// whose whole journal is the window; "window" the last 100,000 inputs of
// a light with a million events, started from the nearest snapshot.
func BenchmarkWhatIf(b *testing.B) {
	proposed := json.RawMessage(`{"states":[{"name":"on","r":255,"g":255,"b":255},{"name":"dim","r":20,"g":20,"b":20}],
		"rules":[{"from":"*","on":"tick","to":"dim","action":"setData('n', (getData('n')||0)-1)"}]}`)
	for _, tc := range []struct {
		name   string
		inputs int
	}{{"all", whatIfInputs}, {"window", whyEvents / 3}} {
		b.Run(tc.name, func(b *testing.B) {
			s := pastDataSet(b, tc.inputs)
			nc := connect(b, s.d.URL)
			// Each tick is an input and two outputs: the window's first
			// input is three events per input before the end.
			from := uint64(1)
			if tc.inputs > whatIfInputs {
				from = s.events - 3*whatIfInputs + 1
			}
			req := messages.WhatIfRequest{Config: proposed, FromSeq: from}
			var w messages.WhatIfReply
			b.ResetTimer()
			for b.Loop() {
				pastRequest(b, nc, messages.VerbWhatIf, req, &w)
				if w.Replayed < whatIfInputs-1 || w.Differ < whatIfInputs-1 {
					b.Fatalf("whatif: replayed %d, differ %d", w.Replayed, w.Differ)
				}
			}
			per := b.Elapsed() / time.Duration(b.N)
			b.StopTimer()
			replay := replayRate(b, s)
			b.ReportMetric(float64(w.Replayed)/per.Seconds(), "whatif-inputs/s")
			b.ReportMetric(float64(s.inputs)/replay.Seconds(), "replay-inputs/s")
			b.ReportMetric((float64(w.Replayed)/per.Seconds())/(float64(s.inputs)/replay.Seconds()), "whatif-vs-replay")
		})
	}
}
