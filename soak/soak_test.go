// Package soak runs the built lumen binary for a while under everything at
// once (ten lights, timers, data sources, tools, agent sessions, NATS and
// HTTP clients, event streams) and kills it now and then, checking that
// nothing acknowledged is lost, that every light replays, and that memory,
// open files and goroutines do not grow. It runs for $LUMEN_SOAK: the
// Taskfile's test task gives 60s, in a step of its own after the other
// packages' tests (which would otherwise share the machine with it and
// move its measures), and `task soak` 10m.
package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/template"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/internal/metrics/metricstest"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// plan is how long the soak runs and how it kills and reads the daemon.
type plan struct {
	Duration         time.Duration
	Overtime         time.Duration // at most, past Duration, for the growth rule to have two processes to compare
	Lights           int
	KillMin, KillMax time.Duration // between a ready line and the next SIGKILL
	Every            time.Duration // between samples
	Rule             growthRule
}

// soakPlan scales the soak (10 minutes, a SIGKILL every 20–40 s,
// growth measured after minute 2) to d: the warm-up is a third of d, at
// most 2 minutes, and kills come every d/30 to d/15, between every 10 to
// 20 s (so that a short soak still has more than one process to compare
// after its warm-up, or one that lives long enough to be compared with
// itself) and every 20 to 40 s. Each process is read at ages KillMin/2 to KillMin, which every
// one reaches: after its start-up (the journal read again, late timers
// and sources run, the tool engine loaded: RSS peaks a few seconds after
// the ready line), over several GC cycles.
func soakPlan(d time.Duration) plan {
	killMin := min(max(d/30, 10*time.Second), 20*time.Second)
	every := time.Second
	return plan{
		Duration: d, Overtime: 2 * time.Minute, Lights: 10, KillMin: killMin, KillMax: 2 * killMin, Every: every,
		Rule: growthRule{Warmup: min(d/3, 2*time.Minute), Band: [2]time.Duration{killMin / 2, killMin},
			MinSamples: max(1, int(killMin/2/every/2)), RSSPct: 20, FDPct: 20, Goroutines: 50,
			RSSNoted: d <= 2*time.Minute},
	}
}

// soakDuration is $LUMEN_SOAK; the soak is skipped when it is unset.
func soakDuration(t *testing.T) time.Duration {
	t.Helper()
	s := os.Getenv("LUMEN_SOAK")
	if s == "" {
		t.Skip("the soak runs alone, for $LUMEN_SOAK: the Taskfile's test task runs it for 60s, task soak for 10m")
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 30*time.Second {
		t.Fatalf("LUMEN_SOAK=%q: want a duration of at least 30s, such as 10m", s)
	}
	return d
}

// TestSoak is issue 19's soak: ten lights with a timer firing every second
// and four data sources each, NATS and HTTP clients firing, reading,
// running a custom tool and asking the agent (a scripted model), event
// streams followed and churned, and a SIGKILL every KillMin–KillMax. At the
// end every acknowledged input is in the journal, each light's counter is
// the fold of its journal, the event stream missed nothing, replay
// --verify passes on every light, and no measure grew (growthRule).
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	lumentest.NeedGuest(t)
	p := soakPlan(soakDuration(t))
	// Sources poll every 2 s rather than the daemon's minimum of 10 s.
	t.Setenv("LUMEN_SOURCE_MIN_INTERVAL_MS", "1000")

	var price atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"price":%d}`, 100+price.Add(1)%50)
	}))
	defer api.Close()
	model := agenttest.New(agenttest.Step{Func: pokeAndDone, Repeat: true})
	defer model.Close()

	lights := make([]string, p.Lights)
	for i := range lights {
		lights[i] = fmt.Sprintf("soak%d", i)
	}
	apiHost := strings.TrimPrefix(api.URL, "http://")
	natsAddr, httpAddr := lumentest.FreeAddr(t), lumentest.FreeAddr(t)
	args := []string{"--listen", natsAddr, "--http", httpAddr, "--allow-net", apiHost,
		"--openai-base-url", model.BaseURL(), "--model", "scripted", "--snapshot-every", "200"}
	for _, l := range lights {
		args = append(args, "--light", l)
	}
	dir := t.TempDir()
	bin := lumentest.Bin(t)
	first, err := lumentest.Launch(bin, dir, args...)
	if err != nil {
		t.Fatal(err)
	}
	run := &daemons{cur: first, ready: time.Now(), bin: bin, dir: dir, args: args}
	t.Cleanup(run.stop)
	url := "nats://" + natsAddr
	for _, l := range lights {
		configure(t, bin, url, l, apiHost)
	}

	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := &clients{nc: nc, web: "http://" + httpAddr, url: url, bin: bin, lights: lights,
		http: &http.Client{Timeout: 10 * time.Second}, acks: newAcks(), tally: newTally(), events: newEventLog()}

	// The soak: clients, samples and kills for p.Duration, and on until
	// two processes after the warm-up were read in their band (on a busy
	// machine a start can take seconds), for at most p.Overtime more.
	ctx, stopLoad := context.WithCancel(context.Background())
	defer stopLoad()
	run.start, run.plan, run.abort = time.Now(), p, stopLoad
	var load sync.WaitGroup
	load.Go(func() { run.sample(ctx, c.web) })
	load.Go(func() { run.killEvery(ctx) })
	// The event stream's client goes on until the journal is checked.
	follow, stopFollowing := context.WithCancel(context.Background())
	defer stopFollowing()
	var following sync.WaitGroup
	following.Go(func() { c.follow(follow) })
	c.start(ctx)
	run.waitEnd(ctx)
	stopLoad()
	c.wait()
	load.Wait()
	if err := run.err(); err != nil {
		t.Fatal(err)
	}
	samples := run.samples
	t.Logf("%v, %d SIGKILLs, %d samples", time.Since(run.start).Round(time.Second), len(run.restarts), len(samples))
	var took []string
	for _, r := range run.restarts {
		took = append(took, fmt.Sprintf("%v (%v)", r.At.Round(time.Second), r.Took.Round(10*time.Millisecond)))
	}
	t.Logf("SIGKILLs at (ready again after): %s", strings.Join(took, ", "))
	for _, l := range run.slowLogs {
		t.Logf("a slow start:\n%s", l)
	}
	t.Logf("requests:\n%s", c.tally)
	defer func() {
		t.Logf("samples (one every %v, and each process's first and last):\n%s", p.Duration/60, table(samples, int(p.Duration/60/p.Every)))
	}()

	checkJournal(t, run.current(), nc, c, p)
	stopFollowing()
	following.Wait()
	// model.Err is not checked: its script never runs out, and a daemon
	// killed while sending a request leaves it a body that is not JSON.
	for _, r := range c.tally.refusals() {
		t.Errorf("refused: %s", r)
	}

	// Every light replays from its journal with every output matching,
	// the daemon stopped.
	if err := run.current().Stop(); err != nil {
		t.Error(err)
	}
	for _, l := range lights {
		out, err := exec.Command(bin, "replay", "--data", dir, "--light", l, "--verify", "--quiet").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "every recorded output matches") {
			t.Errorf("replay --verify --light %s after the soak: %v\n%s", l, err, out)
		}
	}

	v := checkGrowth(samples, p.Rule)
	t.Logf("growth (warm-up %v; RSS and open files at most +%.0f%%, goroutines at most +%.0f):\n%s",
		p.Rule.Warmup, p.Rule.RSSPct, p.Rule.Goroutines, strings.Join(v.Compared, "\n"))
	for _, g := range v.Noted {
		t.Logf("noted, not judged in a run of %v (RSS is judged after minute 2: task soak): %s", p.Duration, g)
	}
	for _, g := range v.Grew {
		t.Error(g)
	}
}

// pokeAndDone is the scripted model: a request gets getVariables and a
// poke, then done once their results are back.
func pokeAndDone(req agenttest.ChatRequest) agenttest.Step {
	if req.Last().Role == "tool" {
		return agenttest.Step{Calls: []agenttest.Call{{Name: "done", Args: `{"message":"Poked."}`}}}
	}
	return agenttest.Step{Calls: []agenttest.Call{{Name: "getVariables", Args: `{}`}, {Name: "fire", Args: `{"transition":"poke"}`}}}
}

// configure gives light the soak's configuration with lumen apply -f, and
// starts its timer.
func configure(t *testing.T, bin, url, light, api string) {
	t.Helper()
	tmpl := template.Must(template.ParseFiles("testdata/light.yaml"))
	var b bytes.Buffer
	if err := tmpl.Execute(&b, map[string]string{"Light": light, "API": api}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"apply", "-f", "-"}, {"fire", "start"}} {
		cmd := exec.Command(bin, append(args, "--light", light)...)
		cmd.Env = append(os.Environ(), "NATS_URL="+url)
		if args[0] == "apply" {
			cmd.Stdin = bytes.NewReader(b.Bytes())
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("lumen %s --light %s: %v\n%s", strings.Join(args, " "), light, err, out)
		}
	}
}

// daemons is the daemon of the moment, which killEvery replaces.
type daemons struct {
	bin, dir string
	args     []string

	start time.Time
	plan  plan
	abort context.CancelFunc // ends the soak

	mu       sync.Mutex
	cur      *lumentest.Daemon // nil while it restarts
	ready    time.Time
	failed   error
	samples  []sample
	restarts []restart
	slowLogs []string
}

// restart is when a SIGKILL came and how long the next ready line took.
type restart struct{ At, Took time.Duration }

func (r *daemons) current() *lumentest.Daemon {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

func (r *daemons) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *daemons) stop() {
	if d := r.current(); d != nil {
		_ = d.Stop()
	}
}

// enough says whether the soak may end: Duration is over, and two
// processes after the warm-up were read in their band.
func (r *daemons) enough() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.start) >= r.plan.Duration && len(r.plan.Rule.compared(r.samples)) >= 2
}

// waitEnd returns once enough, or Overtime after Duration, or when ctx
// ends.
func (r *daemons) waitEnd(ctx context.Context) {
	limit := time.After(r.plan.Duration + r.plan.Overtime)
	tick := time.NewTicker(r.plan.Every / 4)
	defer tick.Stop()
	for !r.enough() {
		select {
		case <-ctx.Done():
			return
		case <-limit:
			return
		case <-tick.C:
		}
	}
}

// killEvery kills the daemon KillMin–KillMax after each ready line and
// starts it again, until ctx ends, or until the soak has enough when the
// next kill is due: the last process lives to the end.
func (r *daemons) killEvery(ctx context.Context) {
	p := r.plan
	for {
		r.mu.Lock()
		at := r.ready.Add(p.KillMin + rand.N(p.KillMax-p.KillMin))
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(at)):
		}
		if r.enough() {
			return
		}
		r.mu.Lock()
		d := r.cur
		r.cur = nil
		r.mu.Unlock()
		d.Kill()
		killed := time.Now()
		d, err := lumentest.Launch(r.bin, r.dir, r.args...)
		r.mu.Lock()
		r.cur, r.ready, r.failed = d, time.Now(), err
		r.restarts = append(r.restarts, restart{At: killed.Sub(r.start), Took: r.ready.Sub(killed)})
		if err == nil && r.ready.Sub(killed) > 5*time.Second {
			r.slowLogs = append(r.slowLogs, d.Logs())
		}
		r.mu.Unlock()
		if err != nil {
			r.abort() // the soak cannot go on without a daemon
			return
		}
	}
}

// sample reads the daemon every Every until ctx ends: its RSS and open
// files from /proc, its goroutines from GET /metrics. A reading of a
// process that is being killed is dropped.
func (r *daemons) sample(ctx context.Context, web string) {
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(r.plan.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r.mu.Lock()
		d, ready := r.cur, r.ready
		r.mu.Unlock()
		if d == nil {
			continue
		}
		s := sample{T: time.Since(r.start), Pid: d.Pid(), Age: time.Since(ready), Goroutines: goroutines(ctx, client, web)}
		kb, err := lumentest.ProcStatusKB(s.Pid, "VmRSS")
		if err != nil {
			continue
		}
		if s.FDs, err = lumentest.OpenFiles(s.Pid); err != nil {
			continue
		}
		s.RSS = kb["VmRSS"]
		r.mu.Lock()
		if ctx.Err() == nil && r.cur == d {
			r.samples = append(r.samples, s)
		}
		r.mu.Unlock()
	}
}

// goroutines reads the go_goroutines gauge of the daemon's /metrics
// (Prometheus text format); -1 when it cannot.
func goroutines(ctx context.Context, client *http.Client, web string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, web+"/metrics", nil)
	if err != nil {
		return -1
	}
	resp, err := client.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return -1
	}
	scrape, err := metricstest.Parse(resp.Body)
	if err != nil {
		return -1
	}
	n, ok := scrape.Value("go_goroutines")
	if !ok {
		return -1
	}
	return int(n)
}

// checkJournal checks, on the daemon of the end, that every acknowledged
// input is in the journal as an input of its light, that each light's
// pokes counter is the number of poke inputs journaled, that each
// light's timer kept firing, and that the event stream client saw every
// event since it first connected, none twice.
func checkJournal(t *testing.T, d *lumentest.Daemon, nc *nats.Conn, c *clients, p plan) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	j := journal.New(js)
	var jr journalRead
	if err := jr.more(ctx, j); err != nil {
		t.Fatalf("reading the journal: %v\n%s", err, d.Logs())
	}

	acked := c.acks.all()
	lost := 0
	for seq, light := range acked {
		if l, dir, _, ok := subject.Parse(jr.subjects[seq]); !ok || l != light || dir != subject.DirIn {
			if lost++; lost <= 10 {
				t.Errorf("acknowledged input %d of %s is not in the journal (there: %q)", seq, light, jr.subjects[seq])
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged inputs are not in the journal", lost, len(acked))
	}
	t.Logf("%d acknowledged inputs, each in the journal of %d events (%d inputs)", len(acked), len(jr.subjects), jr.inputs)

	// A light may still be applying its last inputs, and an agent
	// request cut by the last kill may still be poking: wait until each
	// light's counter is its journal's count.
	for _, l := range c.lights {
		var pokes float64
		var got []byte // the light's get
		lumentest.WaitFor(t, time.Minute, "the pokes of "+l+" to be applied", func() bool {
			if jr.more(ctx, j) != nil {
				return false
			}
			m, err := nc.RequestWithContext(ctx, subject.Cmd(l, "get"), []byte(`{}`))
			if err != nil {
				return false
			}
			got = m.Data
			var g struct {
				Vars map[string]any `json:"vars"`
			}
			if json.Unmarshal(m.Data, &g) != nil {
				return false
			}
			pokes, _ = g.Vars["pokes"].(float64)
			return int(pokes) == jr.pokes[l]
		})
		if acked := c.acks.pokes(l); jr.pokes[l] < acked {
			t.Errorf("%s: %d pokes journaled, %d acknowledged", l, jr.pokes[l], acked)
		}
		// The timer starts itself again every second: late after each
		// kill, slower on a busy machine, but it never stops.
		if min := int(p.Duration.Seconds() / 4); jr.ticks[l] < min {
			t.Errorf("%s: its timer fired %d times in %v, want at least %d", l, jr.ticks[l], p.Duration, min)
		}
		if !strings.Contains(string(got), `"name":"tick"`) {
			t.Errorf("%s: its timer tick is no longer pending: %s", l, got)
		}
	}

	// The event stream: everything from its first event to the journal's
	// end, none twice.
	end := jr.last
	lumentest.WaitFor(t, time.Minute, fmt.Sprintf("the event stream to reach %d", end), func() bool { return c.events.max() >= end })
	first, seen, dups, disorder := c.events.report()
	missed := 0
	for seq := range jr.subjects {
		if seq >= first && seq <= end && !seen[seq] {
			if missed++; missed <= 10 {
				t.Errorf("the event stream (GET /api/v1/events) missed event %d (%s)", seq, jr.subjects[seq])
			}
		}
	}
	if missed > 0 || dups > 0 || disorder > 0 {
		t.Errorf("the event stream missed %d events, repeated %d, and gave %d out of order, of %d from %d to %d", missed, dups, disorder, end-first+1, first, end)
	}
	t.Logf("the event stream saw events %d to %d (%d), across %d connections", first, end, end-first+1, c.events.connections())
}

// journalRead is what the soak reads of the journal, read in increments.
type journalRead struct {
	last     uint64
	subjects map[uint64]string
	inputs   int
	pokes    map[string]int // poke inputs by light
	ticks    map[string]int // tick timer inputs by light
}

// more reads the events after the last one read.
func (jr *journalRead) more(ctx context.Context, j *journal.Journal) error {
	if jr.subjects == nil {
		jr.subjects, jr.pokes, jr.ticks = map[uint64]string{}, map[string]int{}, map[string]int{}
	}
	last, err := j.LastSeq(ctx)
	if err != nil || last <= jr.last {
		return err
	}
	err = j.Replay(ctx, subject.AllEvents, jr.last+1, last, func(m journal.Msg) error {
		if _, ok := jr.subjects[m.Seq]; ok {
			return nil // read by a try that failed later
		}
		jr.subjects[m.Seq] = m.Subject
		light, dir, typ, _ := subject.Parse(m.Subject)
		if dir == subject.DirIn {
			jr.inputs++
			switch {
			case typ == "fired" && bytes.Contains(m.Data, []byte(`"transition":"poke"`)):
				jr.pokes[light]++
			case typ == "timer" && bytes.Contains(m.Data, []byte(`"name":"tick"`)):
				jr.ticks[light]++
			}
		}
		return nil
	})
	if err == nil {
		jr.last = last
	}
	return err
}

func TestSoakPlan(t *testing.T) {
	tests := []struct {
		d                      time.Duration
		killMin, killMax, warm time.Duration
		band                   [2]time.Duration
		rssNoted               bool
	}{
		{time.Minute, 10 * time.Second, 20 * time.Second, 20 * time.Second, [2]time.Duration{5 * time.Second, 10 * time.Second}, true},
		{10 * time.Minute, 20 * time.Second, 40 * time.Second, 2 * time.Minute, [2]time.Duration{10 * time.Second, 20 * time.Second}, false},
		{time.Hour, 20 * time.Second, 40 * time.Second, 2 * time.Minute, [2]time.Duration{10 * time.Second, 20 * time.Second}, false},
	}
	for _, tt := range tests {
		p := soakPlan(tt.d)
		if p.KillMin != tt.killMin || p.KillMax != tt.killMax || p.Rule.Warmup != tt.warm || p.Rule.Band != tt.band || p.Rule.RSSNoted != tt.rssNoted {
			t.Errorf("soakPlan(%v): kills every %v–%v, warm-up %v, band %v, RSS noted only %v; want %v–%v, %v, %v, %v",
				tt.d, p.KillMin, p.KillMax, p.Rule.Warmup, p.Rule.Band, p.Rule.RSSNoted, tt.killMin, tt.killMax, tt.warm, tt.band, tt.rssNoted)
		}
	}
}
