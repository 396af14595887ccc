package bench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// BenchmarkSourceToState measures a poll data source inside the daemon,
// to the state event of the transition it fires reaching a subscriber:
// from the moment its run is journaled (the time of its data input,
// "journaled-"), and from the moment the price server answered the tool's
// fetch ("answer-": the rest of the tool's run, the source's actor, the
// data command, its journaling and the light). Each iteration is one run
// of a 100 ms source against a local price server. Needs the tools' wasm
// guest (the Taskfile builds it).
func BenchmarkSourceToState(b *testing.B) {
	b.Setenv("LUMEN_SOURCE_MIN_INTERVAL_MS", "50")
	var price, answered atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"price":%d}`, 100+price.Add(1))
		answered.Store(time.Now().UnixNano())
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")
	d := startDaemon(b, b.TempDir(), "--light", benchLight, "--sync", "always", "--allow-net", host)
	nc := connect(b, d.URL)
	mustCommand(b, nc, "apply", []byte(fmt.Sprintf(`{"states":[{"name":"on","r":255,"g":255,"b":255}],
		"rules":[{"from":"*","on":"price_updated","to":"on"}],
		"tools":[{"name":"price","hosts":[%q],"code":"return await (await fetch('http://%s/')).json();"}]}`, host, host)))
	runs := make(chan *nats.Msg, 1024)
	states := make(chan *nats.Msg, 1024)
	for subj, ch := range map[string]chan *nats.Msg{subject.In(benchLight, messages.InData): runs, subject.Out(benchLight, messages.OutState): states} {
		sub, err := nc.ChanSubscribe(subj, ch)
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	mustCommand(b, nc, "create_source", []byte(`{"name":"btc","interval_ms":100,"fetch":{"tool":"price"},"store":{"btc_price":"result.price"},"fires":"price_updated"}`))
	next := func() (journaled, answer time.Duration) {
		var started time.Time
		timeout := time.After(30 * time.Second)
		for {
			select {
			case m := <-runs:
				var env messages.Envelope
				if messages.DecodeEnvelope(m.Data, &env) == nil && started.IsZero() {
					started = env.Time
				}
			case m := <-states:
				var env messages.Envelope
				if messages.DecodeEnvelope(m.Data, &env) == nil && !started.IsZero() {
					return time.Since(started), time.Since(time.Unix(0, answered.Load()))
				}
			case <-timeout:
				b.Fatal("the source did not change the state (is the tools' wasm guest built?)")
			}
		}
	}
	// The first run loads the tool engine.
	twoLatencies(b, 1, next, "journaled-", "answer-")
}
