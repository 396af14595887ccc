package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/color"
	"github.com/lumen-home/lumen/nats/wire"
)

// Local is the mode of the everyday suite without a model: the daemon's
// own understanding.
const Local = "local"

// baseBrightness is every light's dimmer before a case.
const baseBrightness = 60

// EverydayResult is one sentence of the corpus said in one mode.
type EverydayResult struct {
	Mode     string `json:"mode"` // Local, or the model
	Line     int    `json:"line"`
	Sentence string `json:"sentence"`
	Want     string `json:"want"`
	// Judged is false for a case for the model run with a model: what a
	// model makes of it is no everyday command to judge.
	Judged bool `json:"judged"`
	Pass   bool `json:"pass"`
	// Got is what happened, for a failure: the lights that changed and
	// how, or the refusal.
	Got     string  `json:"got,omitempty"`
	Turns   int     `json:"turns"` // the model's
	Tokens  int     `json:"tokens"`
	Seconds float64 `json:"seconds"`
}

// RunEveryday says every sentence of the corpus to a scratch house of the
// corpus's lights, first without a model (mode Local), then with each of
// cfg.Models; it returns the results mode by mode, in the corpus's order.
// Of cfg it reads Agent, Models, CaseTimeout, Parallel (houses at once,
// each with a share of the sentences) and Dir.
func RunEveryday(ctx context.Context, e Everyday, cfg Config) ([]EverydayResult, error) {
	if cfg.CaseTimeout <= 0 {
		cfg.CaseTimeout = DefaultCaseTimeout
	}
	if cfg.Agent.BaseURL == "" {
		cfg.Agent.BaseURL = "https://api.openai.com/v1"
	}
	var out []EverydayResult
	for _, mode := range append([]string{Local}, cfg.Models...) {
		rs, err := runMode(ctx, e, cfg, mode)
		out = append(out, rs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// runMode runs the corpus in one mode on cfg.Parallel houses.
func runMode(ctx context.Context, e Everyday, cfg Config, mode string) ([]EverydayResult, error) {
	out := make([]EverydayResult, len(e.Cases))
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range min(max(cfg.Parallel, 1), len(e.Cases)) {
		wg.Go(func() {
			h, err := startHouse(ctx, e, cfg, mode)
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				for range next { // the others take them
				}
				return
			}
			defer h.close()
			for i := range next {
				out[i] = h.say(ctx, e.Cases[i])
				if cfg.EverydayFinished != nil {
					mu.Lock()
					cfg.EverydayFinished(out[i])
					mu.Unlock()
				}
			}
		})
	}
	for i := range e.Cases {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	out = slices.DeleteFunc(out, func(r EverydayResult) bool { return r.Mode == "" })
	if first != nil && len(out) == 0 {
		return nil, first
	}
	return out, ctx.Err()
}

// house is a scratch daemon running the corpus's lights, with their
// rooms, aliases, groups and states; every sentence is said to SaidTo.
type house struct {
	e     Everyday
	cfg   Config
	mode  string
	dir   string
	d     *daemon.Daemon
	nc    *nats.Conn
	w     *wire.Client
	clk   *clocktest.Clock
	meter *meter // nil without a model

	names []string                     // the lights
	now   map[string]messages.GetReply // each light as last read; none: not known
	asked int                          // sentences said, for fresh sessions

	mu   sync.Mutex        // guards cfgs, set up a light each at once
	cfgs map[string]string // each light's configuration as applied (configOf)
}

func startHouse(ctx context.Context, e Everyday, cfg Config, mode string) (*house, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "lumen-eval-everyday-")
	if err != nil {
		return nil, fmt.Errorf("eval: scratch house: %w", err)
	}
	h := &house{e: e, cfg: cfg, mode: mode, dir: dir, clk: clocktest.New(start()),
		cfgs: map[string]string{}, now: map[string]messages.GetReply{}}
	dc := daemon.DefaultConfig(dir)
	dc.Listen, dc.HTTP, dc.MQTT = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	dc.Sync = "batch" // nothing here must survive a power cut
	dc.ClockMode, dc.Clock = clock.Trust, h.clk
	dc.Hardware.Driver = "sim"
	dc.Groups = map[string][]string{}
	for _, l := range e.Lights {
		h.names = append(h.names, l.Light)
		for _, g := range l.Groups {
			dc.Groups[g] = append(dc.Groups[g], l.Light)
		}
	}
	dc.Lights = h.names
	if mode != Local {
		if h.meter, err = startMeter(cfg.Agent.BaseURL); err != nil {
			h.close()
			return nil, err
		}
		dc.Agent = cfg.Agent
		dc.Agent.BaseURL, dc.Agent.Model = h.meter.URL(), mode
	} else {
		// No model at all, whatever $OPENAI_API_KEY says.
		dc.Agent.BaseURL, dc.Agent.Model, dc.Agent.APIKey = "", "", ""
	}
	if h.d, h.nc, err = startDaemon(ctx, dc, "lumen-eval-everyday"); err != nil {
		h.close()
		return nil, fmt.Errorf("eval: scratch house: %w", err)
	}
	h.w = wire.New(h.nc, wire.WithWho("eval"), wire.WithTimeout(cfg.CaseTimeout))
	return h, nil
}

func (h *house) close() {
	if h.nc != nil {
		h.nc.Close()
	}
	if h.d != nil {
		h.d.Close() //nolint:errcheck // a scratch house: nothing to keep
	}
	if h.meter != nil {
		h.meter.close()
	}
	os.RemoveAll(h.dir) //nolint:errcheck
}

// base is a light as a case starts it.
type base struct {
	state  string
	bright int
}

// nonOff are a light's states but off, in order.
func nonOff(l agent.Named) []string {
	return slices.DeleteFunc(slices.Clone(l.States), func(s string) bool { return s == "off" })
}

// baseline is how light l starts case c: its first state but off, at
// baseBrightness, no fade; a light the case acts on starts where the
// case's action shows (off for on, another state for state S, another
// level for brightness N).
func baseline(l agent.Named, c EverydayCase) base {
	states := append(nonOff(l), "off")
	b := base{state: states[0], bright: baseBrightness}
	if !slices.Contains(c.lights, l.Light) {
		return b
	}
	switch a := c.act; a.verb {
	case "on":
		b.state = "off"
	case "state":
		if a.state == b.state {
			b.state = states[1]
		}
	case "brightness":
		if !a.rel && a.n == b.bright {
			b.bright = 40
		}
	}
	return b
}

// clickTo is where a click takes light l (its rule on button_click from
// any state): its last state but off, unless that is where it starts.
func clickTo(l agent.Named) string {
	s := nonOff(l)
	if len(s) < 2 {
		return "off"
	}
	return s[len(s)-1]
}

// palette colors the states whose names are no color.
var palette = []color.RGB{{R: 255, G: 170, B: 90}, {R: 90, G: 160, B: 255}, {R: 180, G: 90, B: 255}, {R: 90, G: 230, B: 140}, {R: 255, G: 110, B: 170}}

// config is light l's configuration, going to state.
func config(l agent.Named, state string) []byte {
	states := []map[string]any{{"name": "off", "r": 0, "g": 0, "b": 0}}
	for i, s := range nonOff(l) {
		c, ok := color.Named(strings.ReplaceAll(s, "_", " "))
		if !ok {
			c = palette[i%len(palette)]
		}
		states = append(states, map[string]any{"name": s, "r": c.R, "g": c.G, "b": c.B})
	}
	b, _ := json.Marshal(map[string]any{
		"states":  states,
		"rules":   []map[string]any{{"from": "*", "on": "button_click", "to": clickTo(l)}},
		"room":    l.Room,
		"aliases": l.Aliases,
		"state":   state,
	})
	return b
}

// setUp puts every light where case c starts it, changing only what
// differs from the lights as last read.
func (h *house) setUp(ctx context.Context, c EverydayCase) error {
	errs := make([]error, len(h.e.Lights))
	var wg sync.WaitGroup
	for i, l := range h.e.Lights {
		b := baseline(l, c)
		g, known := h.now[l.Light]
		wg.Go(func() {
			errs[i] = h.reset(ctx, l, b, g, known)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// reset puts light l to b, from g (when known).
func (h *house) reset(ctx context.Context, l agent.Named, b base, g messages.GetReply, known bool) error {
	h.mu.Lock()
	applied := h.cfgs[l.Light]
	h.mu.Unlock()
	if !known || string(configOf(g)) != applied {
		if _, err := h.w.Request(ctx, l.Light, messages.VerbApply, config(l, b.state)); err != nil {
			return fmt.Errorf("eval: light %s: apply: %w", l.Light, err)
		}
		got, err := h.get(ctx, l.Light)
		if err != nil {
			return err
		}
		h.mu.Lock()
		h.cfgs[l.Light] = string(configOf(got))
		h.mu.Unlock()
		g, known = got, true
	}
	zero := 0
	bright := !known || g.Brightness != b.bright || g.Fade != nil
	if bright {
		// Before the state: a light that is off turns on.
		if _, err := h.w.Request(ctx, l.Light, messages.VerbSetBrightness, messages.BrightnessRequest{Percent: &b.bright, FadeMs: &zero}); err != nil {
			return fmt.Errorf("eval: light %s: set_brightness: %w", l.Light, err)
		}
	}
	if bright || g.State != b.state {
		if _, err := h.w.Request(ctx, l.Light, messages.VerbSetState, messages.SetStateRequest{Name: b.state, FadeMs: &zero}); err != nil {
			return fmt.Errorf("eval: light %s: set_state: %w", l.Light, err)
		}
	}
	return nil
}

func (h *house) get(ctx context.Context, light string) (messages.GetReply, error) {
	var g messages.GetReply
	if err := h.w.Call(ctx, light, messages.VerbGet, struct{}{}, &g); err != nil {
		return g, fmt.Errorf("eval: light %s: get: %w", light, err)
	}
	return g, nil
}

// read reads every light.
func (h *house) read(ctx context.Context) error {
	clear(h.now)
	var errs []error
	for _, r := range h.w.RequestAll(ctx, h.names, messages.VerbGet, struct{}{}) {
		g, err := wire.As[messages.GetReply](r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h.now[r.Light] = g
	}
	return errors.Join(errs...)
}

// say runs one case: the lights to where it starts, the sentence said to
// SaidTo in a session of its own, then the lights judged.
func (h *house) say(ctx context.Context, c EverydayCase) (r EverydayResult) {
	r = EverydayResult{Mode: h.mode, Line: c.Line, Sentence: c.Sentence, Want: c.Want, Judged: h.mode == Local || !c.ForModel()}
	if !r.Judged {
		return r
	}
	began := time.Now()
	defer func() { r.Seconds = time.Since(began).Seconds() }()
	ctx, cancel := context.WithTimeout(ctx, h.cfg.CaseTimeout)
	defer cancel()
	if err := h.setUp(ctx, c); err != nil {
		clear(h.now)
		r.Got = err.Error()
		return r
	}
	var turns0, tokens0 int
	if h.meter != nil {
		turns0, tokens0 = h.meter.read()
		defer func() {
			turns, tokens := h.meter.read()
			r.Turns, r.Tokens = turns-turns0, tokens-tokens0
		}()
	}
	h.asked++
	var reply messages.AskReply
	err := h.w.Call(ctx, h.e.SaidTo, messages.VerbAsk, messages.AskRequest{Text: c.Sentence, Session: fmt.Sprintf("everyday-%d", h.asked), Who: "eval"}, &reply)
	var refusal *wire.Error
	if err != nil && !errors.As(err, &refusal) {
		clear(h.now)
		r.Got = "the request failed: " + err.Error()
		return r
	}
	if c.act.fade > 0 {
		// The LED shows where the fade has got to on the scratch clock.
		h.clk.Advance(time.Duration(c.act.fade)*time.Millisecond + time.Second)
	}
	if err := h.read(ctx); err != nil {
		r.Got = err.Error()
		return r
	}
	changed := h.changes(ctx, c)
	said := "done"
	switch {
	case refusal != nil:
		said = fmt.Sprintf("refused (%d): %s", refusal.Code, clip.Line(refusal.Msg, 100, "…"))
	case reply.Status != messages.AgentDone:
		said = fmt.Sprintf("%s: %s", reply.Status, clip.Line(reply.Answer, 100, "…"))
	}
	if c.ForModel() {
		r.Pass = refusal != nil && refusal.Code == 409 && changed == ""
		if !r.Pass {
			r.Got = strings.TrimPrefix(said+"; "+cmpOr(changed, "nothing changed"), "done; ")
			if refusal == nil {
				r.Got = "taken locally: " + r.Got
			}
		}
		return r
	}
	why := h.judge(ctx, c)
	r.Pass = why == ""
	if !r.Pass {
		r.Got = said + "; " + cmpOr(changed, "nothing changed")
		r.Got = strings.TrimPrefix(r.Got, "done; ") + " (" + why + ")"
	}
	return r
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// judge says how the lights differ from what c wants ("" when they do
// not): its lights as its action shows, every other as it started.
func (h *house) judge(ctx context.Context, c EverydayCase) string {
	var wrong []string
	for _, l := range h.e.Lights {
		b, g := baseline(l, c), h.now[l.Light]
		if !slices.Contains(c.lights, l.Light) {
			if g.State != b.state || g.Brightness != b.bright || g.Fade != nil {
				wrong = append(wrong, l.Light+" changed")
			}
			continue
		}
		if w := h.judgeOne(ctx, c.act, l, b, g); w != "" {
			wrong = append(wrong, l.Light+" "+w)
		}
	}
	return strings.Join(wrong, "; ")
}

// judgeOne says how light l (now g, from b) differs from what a does
// ("" when it does not).
func (h *house) judgeOne(ctx context.Context, a expect, l agent.Named, b base, g messages.GetReply) string {
	var fade int
	if g.Fade != nil {
		fade = g.Fade.Ms
	}
	if fade != a.fade {
		return fmt.Sprintf("fades %d ms, want %d", fade, a.fade)
	}
	state := func(want string) string {
		if g.State != want {
			return "is " + g.State + ", want " + want
		}
		return ""
	}
	switch a.verb {
	case "off", "toggle": // every light starts on
		return state("off")
	case "on":
		if g.State == "off" {
			return "is off, want on"
		}
	case "click":
		return state(clickTo(l))
	case "state":
		return state(a.state)
	case "brightness":
		want := a.n
		if a.rel {
			want = min(max(b.bright+a.n, 1), 100)
		}
		if g.Brightness != want || g.State != b.state {
			return fmt.Sprintf("is %s at %d%%, want %s at %d%%", g.State, g.Brightness, b.state, want)
		}
	case "color":
		if w := state(messages.ColorState); w != "" {
			return w
		}
		var led messages.LEDReply
		if err := h.w.Call(ctx, l.Light, messages.VerbLED, struct{}{}, &led); err != nil || len(led.Raw) == 0 {
			return fmt.Sprintf("shows nothing (%v)", err)
		}
		p := undimmed(led.Raw[0], led.Brightness)
		if !sameColor(a.rgb, p) {
			return fmt.Sprintf("shows %s (%s), want %s (%s)", p.Hex(), Class(p.R, p.G, p.B), a.rgb.Hex(), Class(a.rgb.R, a.rgb.G, a.rgb.B))
		}
	}
	return ""
}

// sameColor reports whether the LED shows want, as a person would name
// it: the same class (see Class), and warm where want is warm.
func sameColor(want color.RGB, p messages.Pixel) bool {
	wc := Class(want.R, want.G, want.B)
	return wc == Class(p.R, p.G, p.B) && Matches("warm", want.R, want.G, want.B) == Matches("warm", p.R, p.G, p.B)
}

// changes says which lights differ from where case c started them
// ("kitchen off, hall 80%"), "" when none.
func (h *house) changes(ctx context.Context, c EverydayCase) string {
	var out []string
	for _, l := range h.e.Lights {
		b, g := baseline(l, c), h.now[l.Light]
		var what []string
		if g.State != b.state {
			s := g.State
			if s == messages.ColorState {
				var led messages.LEDReply
				if h.w.Call(ctx, l.Light, messages.VerbLED, struct{}{}, &led) == nil && len(led.Raw) > 0 {
					s += " " + undimmed(led.Raw[0], led.Brightness).Hex()
				}
			}
			what = append(what, s)
		}
		if g.Brightness != b.bright {
			what = append(what, fmt.Sprintf("%d%%", g.Brightness))
		}
		if g.Fade != nil {
			what = append(what, fmt.Sprintf("fade %d", g.Fade.Ms))
		}
		if string(configOf(g)) != h.cfgs[l.Light] && g.State != messages.ColorState {
			what = append(what, "configuration changed")
		}
		if len(what) > 0 {
			out = append(out, l.Light+" "+strings.Join(what, " "))
		}
	}
	return strings.Join(out, ", ")
}
