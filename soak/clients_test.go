package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// Timeouts of the clients' requests. A request sent just before a kill
// gets no answer; the client counts it as lost and goes on.
const (
	requestTimeout = 5 * time.Second
	askTimeout     = 30 * time.Second
)

// clients are the soak's load: each runs in its own goroutine until the
// context ends, against the daemon's fixed NATS and HTTP addresses, which
// outlive its restarts.
type clients struct {
	nc     *nats.Conn
	http   *http.Client
	web    string // http://HOST:PORT
	url    string // nats://HOST:PORT, for the CLI
	bin    string
	lights []string

	acks   *acks
	tally  *tally
	events *eventLog
	wg     sync.WaitGroup
}

// start starts every client but the event stream's follower, which
// follow starts.
func (c *clients) start(ctx context.Context) {
	for _, f := range []func(context.Context){
		c.natsPokes, c.natsPokes, c.natsMisc, c.tools, c.httpClient, c.publisher, c.agent, c.churnStreams,
	} {
		c.wg.Go(func() { f(ctx) })
	}
}

// wait waits for the clients start started to end.
func (c *clients) wait() { c.wg.Wait() }

// every runs f every period until ctx ends, with its own random source.
func every(ctx context.Context, period time.Duration, f func(i int, rnd *rand.Rand)) {
	rnd := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for i := 0; ctx.Err() == nil; i++ {
		f(i, rnd)
		select {
		case <-ctx.Done():
		case <-time.After(period):
		}
	}
}

func (c *clients) light(rnd *rand.Rand) string { return c.lights[rnd.IntN(len(c.lights))] }

// reply is the part of a light's reply the clients read.
type reply struct {
	OK     bool            `json:"ok"`
	Seq    uint64          `json:"seq"`
	Code   int             `json:"code"`
	Error  string          `json:"error"`
	Result json.RawMessage `json:"result"`
	Status string          `json:"status"`
	Calls  []struct {
		Tool   string          `json:"tool"`
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
	} `json:"calls"`
}

// natsCmd sends a command over NATS and counts its outcome under who; ok
// is false when it got no answer or was refused.
func (c *clients) natsCmd(ctx context.Context, who, light, verb, body string, timeout time.Duration) (reply, bool) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := c.nc.RequestWithContext(rctx, subject.Cmd(light, verb), []byte(body))
	if err != nil {
		c.tally.lost(ctx, who, verb)
		return reply{}, false
	}
	r, ok := c.decode(who, verb, m.Data)
	if ok {
		c.tally.ok(who, verb)
	}
	return r, ok
}

// decode reads a reply, counting it as refused unless it is ok or the
// light was still starting (503: nothing done, as good as no answer).
func (c *clients) decode(who, verb string, data []byte) (reply, bool) {
	var r reply
	err := json.Unmarshal(data, &r)
	if err == nil && r.Code == 503 {
		c.tally.note(who, verb+": starting")
		return r, false
	}
	if err != nil || !r.OK {
		c.tally.refused(who, verb, r.Code, string(data))
		return r, false
	}
	return r, true
}

// natsPokes fires poke at random lights, back to back.
func (c *clients) natsPokes(ctx context.Context) {
	every(ctx, 50*time.Millisecond, func(_ int, rnd *rand.Rand) {
		l := c.light(rnd)
		if r, ok := c.natsCmd(ctx, "nats", l, messages.VerbFire, `{"transition":"poke"}`, requestTimeout); ok {
			c.acks.add(r.Seq, l, true)
		}
	})
}

// natsMisc sets a variable, reads the light and lists its sources.
func (c *clients) natsMisc(ctx context.Context) {
	every(ctx, 200*time.Millisecond, func(i int, rnd *rand.Rand) {
		l := c.light(rnd)
		switch i % 3 {
		case 0:
			if r, ok := c.natsCmd(ctx, "nats", l, messages.VerbSetVar, fmt.Sprintf(`{"name":"note","value":%d}`, i), requestTimeout); ok {
				c.acks.add(r.Seq, l, false)
			}
		case 1:
			c.natsCmd(ctx, "nats", l, messages.VerbGet, `{}`, requestTimeout)
		case 2:
			c.natsCmd(ctx, "nats", l, messages.VerbListSources, `{}`, requestTimeout)
		}
	})
}

// tools runs the custom tool and checks its result.
func (c *clients) tools(ctx context.Context) {
	every(ctx, 500*time.Millisecond, func(i int, rnd *rand.Rand) {
		r, ok := c.natsCmd(ctx, "nats", c.light(rnd), messages.VerbRunTool, fmt.Sprintf(`{"name":"double","args":{"n":%d}}`, i), requestTimeout)
		var res struct{ X int }
		if ok && (json.Unmarshal(r.Result, &res) != nil || res.X != 2*i) {
			c.tally.refused("nats", "run_tool result", 0, fmt.Sprintf("double(%d) = %s", i, r.Result))
		}
	})
}

// httpClient is a client of the HTTP API: pokes, reads of the lights and
// a light's configuration, and webhooks.
func (c *clients) httpClient(ctx context.Context) {
	every(ctx, 100*time.Millisecond, func(i int, rnd *rand.Rand) {
		l := c.light(rnd)
		switch i % 4 {
		case 0, 1:
			if data, ok := c.httpDo(ctx, "POST /api/v1/lights/{light}/fire", http.MethodPost, "/api/v1/lights/"+l+"/fire", `{"transition":"poke"}`, http.StatusOK); ok {
				if r, ok := c.decode("http", "POST /api/v1/lights/{light}/fire", data); ok {
					c.acks.add(r.Seq, l, true)
				}
			}
		case 2:
			if i%8 == 2 {
				c.httpDo(ctx, "GET /api/v1/lights", http.MethodGet, "/api/v1/lights", "", http.StatusOK)
			} else {
				c.httpDo(ctx, "GET /api/v1/lights/{light}/config", http.MethodGet, "/api/v1/lights/"+l+"/config", "", http.StatusOK)
			}
		case 3:
			c.httpDo(ctx, "POST /hooks/{light}/door", http.MethodPost, "/hooks/"+l+"/door", fmt.Sprintf(`{"who":"web %d"}`, i), http.StatusAccepted)
		}
	})
}

// httpDo sends a request to the daemon's HTTP port and counts it under
// route: ok with status want, lost without an answer, else refused.
func (c *clients) httpDo(ctx context.Context, route, method, path, body string, want int) ([]byte, bool) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, c.web+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.tally.lost(ctx, "http", route)
		return nil, false
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		c.tally.lost(ctx, "http", route)
		return nil, false
	case resp.StatusCode != want:
		c.tally.refused("http", route, resp.StatusCode, string(data))
		return nil, false
	}
	c.tally.ok("http", route)
	return data, true
}

// publisher rings the lights' nats sources with core NATS messages.
func (c *clients) publisher(ctx context.Context) {
	every(ctx, 200*time.Millisecond, func(i int, rnd *rand.Rand) {
		if c.nc.Publish("home.soak."+c.light(rnd), fmt.Appendf(nil, `{"who":"nats %d"}`, i)) == nil {
			c.tally.ok("nats", "publish home.soak.{light}")
		}
	})
}

// agent asks the agent of a light, in turn over NATS, over HTTP and with
// lumen ask, each in a session of its own; the scripted model answers
// every request with a poke.
func (c *clients) agent(ctx context.Context) {
	every(ctx, 200*time.Millisecond, func(i int, rnd *rand.Rand) {
		l := c.light(rnd)
		// The number keeps the request from being learned as an intent:
		// each one goes to the model.
		text := fmt.Sprintf("soak request %d: poke it", i)
		switch i % 3 {
		case 0:
			r, ok := c.natsCmd(ctx, "agent", l, messages.VerbAsk, fmt.Sprintf(`{"text":%q,"session":"nats"}`, text), askTimeout)
			if ok {
				c.asked(l, "nats", r)
			}
		case 1:
			data, ok := c.httpDo(ctx, "POST /api/v1/lights/{light}/ask", http.MethodPost, "/api/v1/lights/"+l+"/ask", fmt.Sprintf(`{"text":%q,"session":"web"}`, text), http.StatusOK)
			if ok {
				if r, ok := c.decode("agent", "POST /api/v1/lights/{light}/ask", data); ok {
					c.asked(l, "http", r)
				}
			}
		case 2:
			actx, cancel := context.WithTimeout(ctx, askTimeout)
			defer cancel()
			cmd := exec.CommandContext(actx, c.bin, "ask", "--light", l, "--session", "cli", text)
			cmd.Env = append(os.Environ(), "NATS_URL="+c.url)
			out, err := cmd.CombinedOutput()
			switch {
			case err == nil && bytes.Contains(out, []byte("Poked.")):
				c.tally.ok("agent", "lumen ask")
			case actx.Err() != nil:
				c.tally.lost(ctx, "agent", "lumen ask")
			default:
				// Exit 1 when the daemon went away mid-request; noted
				// with what it said, not a refusal of the light's.
				c.tally.note("agent", "lumen ask: "+firstLine(out))
			}
		}
	})
}

// asked counts an ask's status and keeps the poke its fire call
// journaled, acknowledged in the reply.
func (c *clients) asked(light, door string, r reply) {
	c.tally.note("agent", "ask over "+door+": "+r.Status)
	for _, call := range r.Calls {
		var res struct {
			Seq uint64 `json:"seq"`
		}
		if call.Tool == "fire" && call.OK && json.Unmarshal(call.Result, &res) == nil && res.Seq > 0 {
			c.acks.add(res.Seq, light, true)
		}
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// follow follows GET /api/v1/events as a browser would until ctx ends: on
// any break it reconnects with Last-Event-ID.
func (c *clients) follow(ctx context.Context) {
	client := &http.Client{} // no timeout: the stream lasts
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.web+"/api/v1/events", nil)
		if err != nil {
			panic(err)
		}
		if last := c.events.max(); last > 0 {
			req.Header.Set("Last-Event-ID", strconv.FormatUint(last, 10))
		}
		if resp, err := client.Do(req); err == nil {
			if resp.StatusCode == http.StatusOK {
				c.events.connected()
				sc := bufio.NewScanner(resp.Body)
				sc.Buffer(make([]byte, 64<<10), 16<<20)
				for sc.Scan() {
					if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
						if seq, err := strconv.ParseUint(id, 10, 64); err == nil {
							c.events.saw(seq)
						}
					}
				}
			}
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// churnStreams opens a light's event and LED streams, reads them a little
// and goes, as pages opened and closed do.
func (c *clients) churnStreams(ctx context.Context) {
	every(ctx, 300*time.Millisecond, func(i int, rnd *rand.Rand) {
		stream := "events"
		if i%2 == 1 {
			stream = "led"
		}
		path := "/api/v1/lights/" + c.light(rnd) + "/" + stream
		route := "GET /api/v1/lights/{light}/" + stream + " (read 1 s)"
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(sctx, http.MethodGet, c.web+path, nil)
		if err != nil {
			panic(err)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			c.tally.lost(ctx, "http", route)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			c.tally.refused("http", route, resp.StatusCode, string(b))
			return
		}
		n, _ := io.Copy(io.Discard, resp.Body) // until the second is over
		if n > 0 {
			c.tally.ok("http", route)
		} else {
			c.tally.lost(ctx, "http", route)
		}
	})
}

// acks is what the clients were told: each acknowledged input's stream
// sequence and light, and how many of them were pokes.
type acks struct {
	mu     sync.Mutex
	lights map[uint64]string
	poked  map[string]int
}

func newAcks() *acks { return &acks{lights: map[uint64]string{}, poked: map[string]int{}} }

func (a *acks) add(seq uint64, light string, poke bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.lights[seq]; ok {
		return
	}
	a.lights[seq] = light
	if poke {
		a.poked[light]++
	}
}

func (a *acks) all() map[uint64]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.lights)
}

func (a *acks) pokes(light string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.poked[light]
}

// tally counts requests by client, route and outcome, and keeps an
// example of each refusal.
type tally struct {
	mu      sync.Mutex
	counts  map[string]int
	refusal map[string]string
}

func newTally() *tally { return &tally{counts: map[string]int{}, refusal: map[string]string{}} }

func (t *tally) add(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[key]++
}

func (t *tally) ok(who, what string) { t.add(who + " " + what + ": ok") }

// note counts an outcome that is neither success nor a refusal.
func (t *tally) note(who, what string) { t.add(who + " " + what) }

// lost counts a request without an answer (the daemon was killed or
// restarting), unless the soak (ctx) was over.
func (t *tally) lost(ctx context.Context, who, what string) {
	if ctx.Err() == nil {
		t.add(who + " " + what + ": no answer")
	}
}

func (t *tally) refused(who, what string, code int, body string) {
	key := fmt.Sprintf("%s %s: refused %d", who, what, code)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[key]++
	if _, ok := t.refusal[key]; !ok {
		t.refusal[key] = body
	}
}

// refusals are the refusals, each with its count and first body.
func (t *tally) refusals() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, k := range slices.Sorted(maps.Keys(t.refusal)) {
		out = append(out, fmt.Sprintf("%s ×%d, first: %s", k, t.counts[k], strings.TrimSpace(t.refusal[k])))
	}
	return out
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(t.counts)) {
		fmt.Fprintf(&b, "  %7d  %s\n", t.counts[k], k)
	}
	return b.String()
}

// eventLog is what the event stream client saw.
type eventLog struct {
	mu          sync.Mutex
	seen        map[uint64]bool
	first, last uint64
	dups        int
	disorder    int
	connects    int
}

func newEventLog() *eventLog { return &eventLog{seen: map[uint64]bool{}} }

func (e *eventLog) saw(seq uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.seen[seq]:
		e.dups++
	case seq < e.last:
		e.disorder++
	}
	e.seen[seq] = true
	if e.first == 0 {
		e.first = seq
	}
	e.last = max(e.last, seq)
}

func (e *eventLog) connected() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.connects++
}

func (e *eventLog) connections() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.connects
}

func (e *eventLog) max() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last
}

func (e *eventLog) report() (first uint64, seen map[uint64]bool, dups, disorder int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.first, maps.Clone(e.seen), e.dups, e.disorder
}
