package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Config says what to evaluate and how.
type Config struct {
	// Agent is the endpoint and the agent's settings, as lumen up takes
	// them; its Model is ignored in favour of Models.
	Agent daemon.AgentConfig
	// Models are the models to compare, each run on every case.
	Models []string
	// Repeat runs each case this many times per model (default 1).
	Repeat int
	// CaseTimeout bounds one case, its requests and its checks (default
	// DefaultCaseTimeout).
	CaseTimeout time.Duration
	// Settle is how long a check waits for the light to show what it
	// wants (default DefaultSettle).
	Settle time.Duration
	// Only runs the cases with these names (default all).
	Only []string
	// Parallel runs this many cases at once (default 1). Each has its
	// own scratch light; a local model may answer slower for it.
	Parallel int
	// Started and Finished, when set, are told of each case's progress.
	Started  func(model, name string, run, of int)
	Finished func(Result)
	// EverydayFinished, when set, is told of each sentence of the
	// everyday suite (RunEveryday) once judged.
	EverydayFinished func(EverydayResult)
	// Dir is where scratch lights live (default the system's temporary
	// directory); each is removed once its case is judged.
	Dir string
}

// Defaults of Config.
const (
	DefaultCaseTimeout = 3 * time.Minute
	DefaultSettle      = 10 * time.Second
)

// start is the scratch clock's start: Wednesday 3 June 2026, 12:00 local
// time (the cases' schedules are in the machine's zone).
func start() time.Time { return time.Date(2026, 6, 3, 12, 0, 0, 0, time.Local) }

// light is the scratch light's name.
const light = "eval"

// Result is one case's run against one model.
type Result struct {
	Model   string   `json:"model"`
	Case    string   `json:"case"`
	Kind    string   `json:"kind"`
	Run     int      `json:"run"`
	Pass    bool     `json:"pass"`
	Failure string   `json:"failure,omitempty"`
	Turns   int      `json:"turns"`
	Tokens  int      `json:"tokens"`
	Seconds float64  `json:"seconds"`
	Status  []string `json:"status,omitempty"` // each request's status
}

// Run runs the suite against every model and returns the results in the
// order they ran. A case that fails is a result, not an error: Run fails
// only when it cannot run cases at all.
func Run(ctx context.Context, s Suite, cfg Config) ([]Result, error) {
	if len(cfg.Models) == 0 {
		return nil, errors.New("eval: no model: give --model (or $LUMEN_MODEL)")
	}
	cases := s.Cases
	if len(cfg.Only) > 0 {
		cases = slices.DeleteFunc(slices.Clone(cases), func(c Case) bool { return !slices.Contains(cfg.Only, c.Name) })
		for _, name := range cfg.Only {
			if !slices.ContainsFunc(s.Cases, func(c Case) bool { return c.Name == name }) {
				return nil, fmt.Errorf("eval: no case %q in the suite", name)
			}
		}
	}
	cfg.Repeat = max(cfg.Repeat, 1)
	if cfg.CaseTimeout <= 0 {
		cfg.CaseTimeout = DefaultCaseTimeout
	}
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.Agent.BaseURL == "" {
		cfg.Agent.BaseURL = "https://api.openai.com/v1"
	}
	type job struct {
		model string
		c     Case
		run   int
	}
	var jobs []job
	for _, model := range cfg.Models {
		for _, c := range cases {
			for run := 1; run <= cfg.Repeat; run++ {
				jobs = append(jobs, job{model, c, run})
			}
		}
	}
	out := make([]Result, len(jobs))
	var (
		mu   sync.Mutex // orders the callbacks
		next = make(chan int)
		wg   sync.WaitGroup
	)
	for range min(max(cfg.Parallel, 1), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				j := jobs[i]
				if cfg.Started != nil {
					mu.Lock()
					cfg.Started(j.model, j.c.Name, j.run, cfg.Repeat)
					mu.Unlock()
				}
				r := runCase(ctx, cfg, j.model, j.c)
				r.Run = j.run
				out[i] = r
				if cfg.Finished != nil {
					mu.Lock()
					cfg.Finished(r)
					mu.Unlock()
				}
			}
		})
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		// What ran is still worth reporting.
		return slices.DeleteFunc(out, func(r Result) bool { return r.Case == "" }), err
	}
	return out, nil
}

// runCase runs one case on a scratch light of its own.
func runCase(ctx context.Context, cfg Config, model string, c Case) (r Result) {
	r = Result{Model: model, Case: c.Name, Kind: c.Kind}
	began := time.Now()
	defer func() { r.Seconds = time.Since(began).Seconds() }()
	ctx, cancel := context.WithTimeout(ctx, cfg.CaseTimeout)
	defer cancel()
	m, err := startMeter(cfg.Agent.BaseURL)
	if err != nil {
		r.Failure = err.Error()
		return r
	}
	defer m.close()
	defer func() { r.Turns, r.Tokens = m.read() }()
	api, err := startAPI(c.API)
	if err != nil {
		r.Failure = err.Error()
		return r
	}
	defer api.close()
	sc, err := startScratch(ctx, cfg, model, m, api)
	if err != nil {
		r.Failure = err.Error()
		return r
	}
	defer sc.close()
	if err := sc.setUp(ctx, c); err != nil {
		r.Failure = err.Error()
		return r
	}
	for i, st := range c.Steps {
		status, err := sc.step(ctx, c, st)
		if status != "" {
			r.Status = append(r.Status, status)
		}
		if err == nil {
			err = sc.check(ctx, st)
		}
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("the case took longer than %v: %w", cfg.CaseTimeout, err)
			}
			r.Failure = st.describe(i) + ": " + err.Error()
			return r
		}
	}
	r.Pass = true
	return r
}

// scratch is one case's light: a daemon of its own in a temporary
// directory, on a clock the case moves, that nothing else sees.
type scratch struct {
	cfg   Config
	dir   string
	d     *daemon.Daemon
	nc    *nats.Conn
	w     *wire.Client
	clk   *clocktest.Clock
	meter *meter
	api   *testAPI

	start json.RawMessage // the configuration after set-up, for unchanged

	mu        sync.Mutex
	decide    string   // what the person answers approvals now
	approvals []string // the tools that asked, since the last ask began

	hooks []messages.WebhookGiven // the webhooks the agent made, with their tokens
}

func startScratch(ctx context.Context, cfg Config, model string, m *meter, api *testAPI) (*scratch, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "lumen-eval-")
	if err != nil {
		return nil, fmt.Errorf("eval: scratch light: %w", err)
	}
	sc := &scratch{cfg: cfg, dir: dir, clk: clocktest.New(start()), meter: m, api: api}
	dc := daemon.DefaultConfig(dir)
	dc.Listen, dc.HTTP, dc.MQTT = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	dc.Lights = []string{light}
	dc.Sync = "batch" // nothing here must survive a power cut
	dc.ClockMode, dc.Clock = clock.Trust, sc.clk
	dc.Hardware.Driver = "sim" // never the Pi's own pins
	dc.AllowNet = []string{api.host}
	dc.Agent = cfg.Agent
	dc.Agent.BaseURL, dc.Agent.Model = m.URL(), model
	if sc.d, sc.nc, err = startDaemon(ctx, dc, "lumen-eval"); err != nil {
		sc.close()
		return nil, fmt.Errorf("eval: scratch light: %w", err)
	}
	sc.w = wire.New(sc.nc, wire.WithWho("eval"), wire.WithTimeout(cfg.CaseTimeout))
	if _, err := sc.nc.Subscribe(subject.Out(light, messages.OutAgent), sc.onAgent); err != nil {
		sc.close()
		return nil, fmt.Errorf("eval: scratch light: %w", err)
	}
	return sc, nil
}

// startDaemon runs a scratch daemon of dc and connects to it as name;
// what it started is returned with an error too, for the caller to
// close.
func startDaemon(ctx context.Context, dc daemon.Config, name string) (*daemon.Daemon, *nats.Conn, error) {
	d, err := daemon.New(dc)
	if err != nil {
		return nil, nil, err
	}
	if err := d.Run(ctx); err != nil {
		return d, nil, err
	}
	nc, err := nats.Connect(d.URL(), nats.Name(name))
	return d, nc, err
}

func (sc *scratch) close() {
	if sc.nc != nil {
		sc.nc.Close()
	}
	if sc.d != nil {
		sc.d.Close() //nolint:errcheck // a scratch light: nothing to keep
	}
	os.RemoveAll(sc.dir) //nolint:errcheck
}

// onAgent answers the agent's approvals as the current step says, and
// remembers which tools asked.
func (sc *scratch) onAgent(msg *nats.Msg) {
	var env messages.Envelope
	if messages.DecodeEnvelope(msg.Data, &env) != nil {
		return
	}
	var ev messages.OutAgentData
	if json.Unmarshal(env.Data, &ev) != nil || ev.Kind != messages.AgentKindApproval || ev.Call == nil {
		return
	}
	sc.mu.Lock()
	sc.approvals = append(sc.approvals, ev.Call.Tool)
	verb := messages.VerbApprove
	if sc.decide == "reject" {
		verb = messages.VerbReject
	}
	sc.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		sc.w.Request(ctx, light, verb, messages.ApprovalRequest{ID: ev.Approval, Who: "eval"}) //nolint:errcheck // the ask's reply tells
	}()
}

// empty is the configuration of a case that gives none: only the off
// state (not the demo light a new light starts with).
var empty = json.RawMessage(`{"states":[],"rules":[],"vars":{},"confirm_empty":true}`)

// setUp applies the case's starting configuration and remembers it.
func (sc *scratch) setUp(ctx context.Context, c Case) error {
	cfg := c.config
	if cfg == nil {
		cfg = empty
	}
	if _, err := sc.w.Request(ctx, light, messages.VerbApply, cfg); err != nil {
		return fmt.Errorf("eval: the case's light: %w", err)
	}
	g, err := sc.get(ctx)
	if err != nil {
		return err
	}
	sc.start = configOf(g)
	return nil
}

// step does a step's action; for an ask it returns the request's status.
func (sc *scratch) step(ctx context.Context, c Case, st Step) (string, error) {
	switch {
	case st.Ask != "":
		return sc.ask(ctx, c, st)
	case st.Fire != "":
		return "", sc.fire(ctx, st.Fire)
	case len(st.Clicks) > 0:
		for i, want := range st.Clicks {
			if err := sc.fire(ctx, "button_click"); err != nil {
				return "", fmt.Errorf("click %d: %w", i+1, err)
			}
			if err := sc.await(ctx, func(g lightNow) error { return g.color(want) }); err != nil {
				return "", fmt.Errorf("click %d: %w", i+1, err)
			}
		}
	case st.wait > 0:
		sc.advance(st.wait)
	case st.Data != nil:
		vars := map[string]json.RawMessage{}
		for k, v := range st.Data.Vars {
			b, err := json.Marshal(v)
			if err != nil {
				return "", fmt.Errorf("data %s: %w", k, err)
			}
			vars[k] = b
		}
		if _, err := sc.w.Request(ctx, light, messages.VerbData, messages.InDataData{Source: st.Data.Source, Vars: vars}); err != nil {
			return "", err
		}
	case st.SetAPI != nil:
		// What the API answered before must have been read, or a source
		// polling it never saw it: the change would be no change.
		if !sc.api.readSince(sc.cfg.Settle) {
			return "", errors.New("nothing read the test API's previous answer")
		}
		sc.api.set(st.SetAPI)
	case st.MQTT != nil:
		// The embedded server hands an MQTT client's message on topic
		// a/b to NATS subscribers of a.b, where mqtt sources listen.
		if err := sc.publish(strings.ReplaceAll(st.MQTT.Topic, "/", "."), st.MQTT.Payload); err != nil {
			return "", err
		}
	case st.NATS != nil:
		if err := sc.publishHeard(st.NATS.Subject, st.NATS.Payload); err != nil {
			return "", err
		}
	case st.Webhook != nil:
		return "", sc.webhook(ctx, *st.Webhook)
	case st.GPIO != nil:
		pin, level := st.GPIO.Pin, st.GPIO.Level
		if _, err := sc.w.Request(ctx, light, messages.VerbGPIO, messages.GPIORequest{Pin: &pin, Level: &level}); err != nil {
			return "", err
		}
	}
	return "", nil
}

// webhook posts to a webhook the agent made, as its sender would.
func (sc *scratch) webhook(ctx context.Context, w WebhookStep) error {
	i := slices.IndexFunc(sc.hooks, func(h messages.WebhookGiven) bool { return w.Source == "" || h.Source == w.Source })
	if i < 0 {
		name := "source"
		if w.Source != "" {
			name += " " + w.Source
		}
		return fmt.Errorf("the agent made no webhook %s: no ask handed out its token", name)
	}
	h := sc.hooks[i]
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, strings.NewReader(w.Body))
	if err != nil {
		return fmt.Errorf("webhook %s: %w", h.Source, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+h.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", h.Source, err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		return fmt.Errorf("webhook %s answered %s", h.Source, res.Status)
	}
	return nil
}

func (sc *scratch) publish(subj, payload string) error {
	if err := sc.nc.Publish(subj, []byte(payload)); err != nil {
		return err
	}
	return sc.nc.Flush()
}

// publishHeard publishes a message a nats source of the light is to hear,
// again while the light journals no source run for it: a message
// published before the source listens is lost, as on any NATS subject
// nobody listens to yet (the source starts after its creation is
// answered).
func (sc *scratch) publishHeard(subj, payload string) error {
	runs, err := sc.nc.SubscribeSync(subject.In(light, messages.InData))
	if err != nil {
		return err
	}
	defer runs.Unsubscribe() //nolint:errcheck // a scratch light's connection
	for range 10 {
		if err := sc.publish(subj, payload); err != nil {
			return err
		}
		if _, err := runs.NextMsg(2 * time.Second); err == nil {
			return nil
		}
	}
	return fmt.Errorf("no source of the light heard 10 messages on %s", subj)
}

func (sc *scratch) fire(ctx context.Context, transition string) error {
	_, err := sc.w.Request(ctx, light, messages.VerbFire, messages.FireRequest{Transition: transition})
	return err
}

// ask sends a request and judges how it ended: its status, the model
// calls a direct command must not make, the approvals.
func (sc *scratch) ask(ctx context.Context, c Case, st Step) (string, error) {
	sc.mu.Lock()
	sc.decide, sc.approvals = st.Decide, nil
	sc.mu.Unlock()
	turns0, _ := sc.meter.read()
	text := strings.ReplaceAll(st.Ask, "{{api}}", sc.api.url)
	var r messages.AskReply
	if err := sc.w.Call(ctx, light, messages.VerbAsk, messages.AskRequest{Text: text, Session: "eval", Who: "eval"}, &r); err != nil {
		return "", fmt.Errorf("the request failed: %w", err)
	}
	sc.hooks = append(sc.hooks, r.Webhooks...)
	if turns, _ := sc.meter.read(); c.Direct && turns > turns0 {
		return r.Status, fmt.Errorf("the model was called (%d times): the light did not take it for a direct command", turns-turns0)
	}
	if r.Status != st.Want {
		return r.Status, fmt.Errorf("the agent's answer is %s (%q), want %s", r.Status, clip.Line(r.Answer, 120, "…"), st.Want)
	}
	if st.Approvals != nil {
		sc.mu.Lock()
		asked := slices.Clone(sc.approvals)
		sc.mu.Unlock()
		want := *st.Approvals
		switch {
		case len(want) == 0 && len(asked) > 0:
			return r.Status, fmt.Errorf("it asked for approval of %s, want no approval asked", strings.Join(asked, ", "))
		case len(want) > 0 && len(asked) == 0:
			return r.Status, fmt.Errorf("it asked for no approval, want one for %s", strings.Join(want, " or "))
		}
		for _, a := range asked {
			if !slices.Contains(want, a) {
				return r.Status, fmt.Errorf("it asked for approval of %s, want only %s", a, strings.Join(want, " or "))
			}
		}
	}
	return r.Status, nil
}

// advance moves the clock on by d. The light's own timers fire at their
// deadlines, one by one, the light acting on each before the next; the
// sources check their schedules and polls on a one-second tick, which
// fires once per jump and then each second of the last two, so what fell
// due on the way is caught up at the end (a ten-minute poll over an hour
// polls once, not six times: a case judges the end, not the way there).
func (sc *scratch) advance(d time.Duration) {
	const tick = time.Second
	end := sc.clk.Now().Add(d)
	for jumpTo := end.Add(-2 * tick); ; {
		time.Sleep(20 * time.Millisecond) // the light arms what the last firing caused
		next := jumpTo
		for _, p := range sc.clk.Pending() {
			if p.After(sc.clk.Now().Add(tick)) && p.Before(jumpTo) {
				next = p
				break
			}
		}
		if !next.After(sc.clk.Now()) {
			break
		}
		sc.clk.Set(next)
	}
	for sc.clk.Now().Before(end) {
		// The sources re-arm their tick once they have handled the last
		// one: on a busy machine that takes a while, and a second passed
		// before it would skip a check.
		sc.clk.WaitArmed(sc.clk.Now().Add(tick), 2*time.Second)
		sc.clk.Advance(min(tick, end.Sub(sc.clk.Now())))
		time.Sleep(100 * time.Millisecond) // a poll's tool runs in real time
	}
}

// check awaits a step's checks.
func (sc *scratch) check(ctx context.Context, st Step) error {
	if st.State == "" && st.Color == "" && st.Brightness == "" && st.Vars == nil && st.Has == nil && st.Lacks == nil && !st.Unchanged && st.Runs == "" {
		return nil
	}
	err := sc.await(ctx, func(g lightNow) error {
		if st.State != "" && g.get.State != st.State {
			return fmt.Errorf("the state is %s, want %s", g.get.State, st.State)
		}
		if st.Color != "" {
			if err := g.color(st.Color); err != nil {
				return err
			}
		}
		if st.Brightness != "" && !inRange(st.Brightness, g.get.Brightness) {
			return fmt.Errorf("the brightness is %d%%, want %s%%", g.get.Brightness, st.Brightness)
		}
		for k, want := range st.Vars {
			if err := sameValue(k, g.get.Vars[k], want); err != nil {
				return err
			}
		}
		if st.Has != nil {
			if err := g.has(*st.Has, true); err != nil {
				return err
			}
		}
		if st.Lacks != nil {
			if err := g.has(*st.Lacks, false); err != nil {
				return err
			}
		}
		if st.Unchanged && string(configOf(g.get)) != string(sc.start) {
			return errors.New("the light's configuration changed, want it unchanged")
		}
		return nil
	})
	if err != nil || st.Runs == "" {
		return err
	}
	var rr messages.RunToolReply
	if err := sc.w.Call(ctx, light, messages.VerbRunTool, messages.RunToolRequest{Name: st.Runs, Args: json.RawMessage(`{}`)}, &rr); err != nil {
		return fmt.Errorf("tool %s does not run: %w", st.Runs, err)
	}
	return nil
}

// lightNow is the light as a check sees it: get, and the LED.
type lightNow struct {
	get messages.GetReply
	led messages.LEDReply
}

func (g lightNow) color(want string) error {
	if len(g.led.Raw) == 0 {
		return errors.New("the LED shows nothing")
	}
	p := undimmed(g.led.Raw[0], g.led.Brightness)
	if !Matches(want, p.R, p.G, p.B) {
		return fmt.Errorf("the LED is %s (%d,%d,%d, state %s), want %s", Class(p.R, p.G, p.B), p.R, p.G, p.B, g.led.State, want)
	}
	return nil
}

// inRange reports whether n is want: a number, or a range lo-hi.
func inRange(want string, n int) bool {
	lo, hi, ok := percentRange(want)
	return ok && n >= lo && n <= hi
}

// undimmed is the color the LED shows at the light's full brightness:
// a color is judged as the state shows it, whatever the dimmer.
func undimmed(p messages.Pixel, percent int) messages.Pixel {
	if percent <= 0 || percent >= 100 {
		return p
	}
	up := func(v uint8) uint8 { return uint8(min(255, (int(v)*100+percent/2)/percent)) }
	return messages.Pixel{R: up(p.R), G: up(p.G), B: up(p.B)}
}

func (g lightNow) has(n Names, want bool) error {
	var sources []string
	for _, raw := range g.get.Sources {
		var s struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &s) == nil {
			sources = append(sources, s.Name)
		}
	}
	for _, part := range []struct {
		kind  string
		want  []string
		names []string
	}{
		{"state", n.States, namesOf(g.get.States, func(s messages.State) string { return s.Name })},
		{"tool", n.Tools, namesOf(g.get.Tools, func(t messages.Tool) string { return t.Name })},
		{"source", n.Sources, sources},
		{"schedule", n.Schedules, namesOf(g.get.Schedules, func(s messages.Schedule) string { return s.Name })},
		{"function", n.Functions, namesOf(g.get.Functions, func(f messages.Function) string { return f.Name })},
	} {
		for _, name := range part.want {
			if slices.Contains(part.names, name) != want {
				if want {
					return fmt.Errorf("no %s %s (there are: %s)", part.kind, name, strings.Join(part.names, ", "))
				}
				return fmt.Errorf("%s %s is still there", part.kind, name)
			}
		}
	}
	return nil
}

func namesOf[T any](xs []T, name func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = name(x)
	}
	return out
}

// await polls the light until ok holds or Settle has passed; the error
// is ok's last.
func (sc *scratch) await(ctx context.Context, ok func(lightNow) error) error {
	deadline := time.Now().Add(sc.cfg.Settle)
	for {
		var now lightNow
		g, err := sc.get(ctx)
		if err == nil {
			now.get = g
			err = sc.w.Call(ctx, light, messages.VerbLED, struct{}{}, &now.led)
		}
		if err == nil {
			if err = ok(now); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (sc *scratch) get(ctx context.Context) (messages.GetReply, error) {
	var g messages.GetReply
	if err := sc.w.Call(ctx, light, messages.VerbGet, struct{}{}, &g); err != nil {
		return g, fmt.Errorf("eval: get: %w", err)
	}
	return g, nil
}

// configOf is what unchanged compares: the light's configuration,
// without its state, variables and timers.
func configOf(g messages.GetReply) json.RawMessage {
	b, _ := json.Marshal(struct {
		States    []messages.State    `json:"states"`
		Rules     []messages.Rule     `json:"rules"`
		Schedules []messages.Schedule `json:"schedules"`
		Tools     []messages.Tool     `json:"tools"`
		Sources   []json.RawMessage   `json:"sources"`
		Functions []messages.Function `json:"functions"`
	}{g.States, g.Rules, g.Schedules, g.Tools, g.Sources, g.Functions})
	return b
}

// sameValue compares a variable with what a case wants, as JSON values.
func sameValue(name string, got json.RawMessage, want any) error {
	if got == nil {
		return fmt.Errorf("variable %s is not set, want %v", name, want)
	}
	var g any
	if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Errorf("variable %s: %w", name, err)
	}
	wb, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("variable %s: %w", name, err)
	}
	var w any
	if err := json.Unmarshal(wb, &w); err != nil {
		return fmt.Errorf("variable %s: %w", name, err)
	}
	if !reflect.DeepEqual(g, w) {
		return fmt.Errorf("variable %s is %s, want %s", name, got, wb)
	}
	return nil
}

// testAPI is the local HTTP API the cases' tools and sources read: it
// answers every GET with the JSON object the case has set.
type testAPI struct {
	srv  *http.Server
	url  string
	host string

	mu    sync.Mutex
	body  map[string]any
	reads int // GETs answered since the last set
}

func startAPI(body map[string]any) (*testAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("eval: test API: %w", err)
	}
	a := &testAPI{url: "http://" + ln.Addr().String(), host: ln.Addr().String(), body: map[string]any{}}
	a.set(body)
	a.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		a.mu.Lock()
		b, _ := json.Marshal(a.body)
		a.reads++
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(b) //nolint:errcheck
	}), ReadHeaderTimeout: 5 * time.Second}
	go a.srv.Serve(ln) //nolint:errcheck // ends with close
	return a, nil
}

// readSince waits up to d for the API to have answered since the last
// set, and reports whether it has.
func (a *testAPI) readSince(d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		a.mu.Lock()
		n := a.reads
		a.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			return n > 0
		}
	}
}

func (a *testAPI) set(fields map[string]any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads = 0
	for k, v := range fields {
		a.body[k] = v
	}
}

func (a *testAPI) close() { a.srv.Close() }
