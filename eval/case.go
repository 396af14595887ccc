// Package eval judges how well a language model programs a light: a
// suite of requests, each sent through the real agent of a scratch light,
// each judged by what the light does afterwards (its states, variables,
// sources and tools as clicks, time and data drive it), not by the
// model's words.
package eval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
)

// Suite is a file of cases: the lights they start from, by name, and
// the cases.
type Suite struct {
	// Lights are starting configurations (as lumen apply -f takes them),
	// named so that several cases share one.
	Lights map[string]yaml.Node `yaml:"lights"`
	Cases  []Case               `yaml:"cases"`
}

// Case is one request (or a short conversation) and how the light must
// behave after it.
type Case struct {
	Name string `yaml:"name"`
	// Pattern or kind of request the case covers, for the report.
	Kind string `yaml:"kind"`
	// Light names the starting configuration (a key of Suite.Lights);
	// empty: a fresh light (only the off state).
	Light string `yaml:"light"`
	// API is what the local test API answers at first (a JSON object);
	// steps change it with api:.
	API map[string]any `yaml:"api"`
	// Direct says the case's requests are direct commands: the light's
	// own matcher must carry them out without the model (and must take
	// no other case's request for one).
	Direct bool   `yaml:"direct"`
	Steps  []Step `yaml:"steps"`

	config json.RawMessage // the starting configuration as apply takes it
}

// Step is one thing done to the scratch light, then what must hold
// afterwards. At most one action (Ask, Fire, Clicks, Wait, Data, SetAPI,
// MQTT, GPIO); the checks are awaited briefly, as the light settles.
type Step struct {
	// Ask sends a request to the agent; {{api}} in it is the local test
	// API's URL. Want is the request's status (default done), Decide what
	// the person answers to approvals (approve, the default, or reject),
	// Approvals the tools that must have asked for one (in any order;
	// an empty list: none may).
	Ask       string    `yaml:"ask"`
	Want      string    `yaml:"want"`
	Decide    string    `yaml:"decide"`
	Approvals *[]string `yaml:"approvals"`

	Fire string `yaml:"fire"`
	// Clicks fires button_click once per entry; after each, the light
	// must be in that entry's state.
	Clicks []string `yaml:"clicks"`
	// Wait moves the scratch light's clock on (timers and schedules due
	// by then fire).
	Wait    string         `yaml:"wait"`
	Data    *DataStep      `yaml:"data"`
	SetAPI  map[string]any `yaml:"api"`
	MQTT    *MQTTStep      `yaml:"mqtt"`
	NATS    *NATSStep      `yaml:"nats"`
	GPIO    *GPIOStep      `yaml:"gpio"`
	Webhook *WebhookStep   `yaml:"webhook"`

	// Checks. Color is judged on the LED: a color class (see Class), or
	// several joined by |; Runs is a tool that must run without error.
	State string `yaml:"state"`
	Color string `yaml:"color"`
	// Brightness is the light's dimmer in percent: N, or a range N-M.
	Brightness string         `yaml:"brightness"`
	Vars       map[string]any `yaml:"vars"`
	Has        *Names         `yaml:"has"`
	Lacks      *Names         `yaml:"lacks"`
	Unchanged  bool           `yaml:"unchanged"`
	Runs       string         `yaml:"runs"`

	wait time.Duration
}

// DataStep journals a data source's run with these values (the data verb).
type DataStep struct {
	Source string         `yaml:"source"`
	Vars   map[string]any `yaml:"vars"`
}

// MQTTStep is a message an MQTT client publishes on Topic.
type MQTTStep struct {
	Topic   string `yaml:"topic"`
	Payload string `yaml:"payload"`
}

// NATSStep is a message published on Subject.
type NATSStep struct {
	Subject string `yaml:"subject"`
	Payload string `yaml:"payload"`
}

// WebhookStep posts Body to a webhook source the agent made, with the
// token its ask handed out: Source's, or the first one's.
type WebhookStep struct {
	Source string `yaml:"source"`
	Body   string `yaml:"body"`
}

// GPIOStep sets a simulated input pin.
type GPIOStep struct {
	Pin   int `yaml:"pin"`
	Level int `yaml:"level"`
}

// Names are parts of a light's configuration, by name.
type Names struct {
	States    []string `yaml:"states"`
	Tools     []string `yaml:"tools"`
	Sources   []string `yaml:"sources"`
	Schedules []string `yaml:"schedules"`
	Functions []string `yaml:"functions"`
}

//go:embed cases.yaml
var builtin []byte

// Builtin is the suite that ships in the binary.
func Builtin() (Suite, error) {
	return Parse("cases.yaml", builtin)
}

// Load reads a suite from a file.
func Load(path string) (Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Suite{}, fmt.Errorf("eval: %w", err)
	}
	return Parse(path, b)
}

// Parse decodes and checks a suite; errors name the file, the case and
// the step.
func Parse(name string, b []byte) (Suite, error) {
	var s Suite
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Suite{}, fmt.Errorf("eval: %s: %w", name, err)
	}
	if len(s.Cases) == 0 {
		return Suite{}, fmt.Errorf("eval: %s: no cases", name)
	}
	configs := map[string]json.RawMessage{}
	for light, node := range s.Lights {
		y, err := yaml.Marshal(&node)
		if err != nil {
			return Suite{}, fmt.Errorf("eval: %s: light %s: %w", name, light, err)
		}
		j, err := messages.ToJSON(y, ".yaml")
		if err != nil {
			return Suite{}, fmt.Errorf("eval: %s: light %s: %w", name, light, err)
		}
		var req messages.ApplyRequest
		if err := messages.Decode(j, &req); err != nil {
			return Suite{}, fmt.Errorf("eval: %s: light %s: %w", name, light, err)
		}
		configs[light] = j
	}
	seen := map[string]bool{}
	for i := range s.Cases {
		c := &s.Cases[i]
		if err := c.check(configs); err != nil {
			return Suite{}, fmt.Errorf("eval: %s: case %d (%s): %w", name, i+1, c.Name, err)
		}
		if seen[c.Name] {
			return Suite{}, fmt.Errorf("eval: %s: case %q is given twice", name, c.Name)
		}
		seen[c.Name] = true
	}
	return s, nil
}

// Asks are the requests of the case, in order.
func (c Case) Asks() []string {
	var out []string
	for _, s := range c.Steps {
		if s.Ask != "" {
			out = append(out, s.Ask)
		}
	}
	return out
}

// States are the names of the states the case's light starts with.
func (c Case) States() []string {
	names := []string{"off"}
	var req messages.ApplyRequest
	if c.config != nil && json.Unmarshal(c.config, &req) == nil {
		for _, s := range req.States {
			if s.Name != "off" {
				names = append(names, s.Name)
			}
		}
	}
	return names
}

func (c *Case) check(configs map[string]json.RawMessage) error {
	if c.Name == "" {
		return errors.New("no name")
	}
	if c.Light != "" {
		cfg, ok := configs[c.Light]
		if !ok {
			return fmt.Errorf("light %q is not one of the suite's lights", c.Light)
		}
		c.config = cfg
	}
	if len(c.Asks()) == 0 {
		return errors.New("no step asks anything")
	}
	for i := range c.Steps {
		if err := c.Steps[i].check(); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return nil
}

func (s *Step) check() error {
	actions := 0
	for _, set := range []bool{s.Ask != "", s.Fire != "", len(s.Clicks) > 0, s.Wait != "", s.Data != nil,
		s.SetAPI != nil, s.MQTT != nil, s.NATS != nil, s.GPIO != nil, s.Webhook != nil} {
		if set {
			actions++
		}
	}
	if actions > 1 {
		return errors.New("more than one action (ask, fire, clicks, wait, data, api, mqtt, nats, gpio, webhook)")
	}
	if s.Ask == "" && (s.Want != "" || s.Decide != "" || s.Approvals != nil) {
		return errors.New("want, decide and approvals go with an ask")
	}
	switch s.Want {
	case "":
		if s.Ask != "" {
			s.Want = messages.AgentDone
		}
	case messages.AgentDone, messages.AgentQuestion:
	default:
		return fmt.Errorf("want %q: give done or question", s.Want)
	}
	switch s.Decide {
	case "", "approve", "reject":
	default:
		return fmt.Errorf("decide %q: give approve or reject", s.Decide)
	}
	if s.Wait != "" {
		d, err := time.ParseDuration(s.Wait)
		if err != nil || d <= 0 {
			return fmt.Errorf("wait %q: give a duration such as 90s or 5m", s.Wait)
		}
		s.wait = d
	}
	if s.Data != nil && s.Data.Source == "" {
		return errors.New("data needs a source")
	}
	if s.MQTT != nil && s.MQTT.Topic == "" {
		return errors.New("mqtt needs a topic")
	}
	if s.NATS != nil && s.NATS.Subject == "" {
		return errors.New("nats needs a subject")
	}
	for _, c := range strings.Split(s.Color, "|") {
		if c != "" && !knownClass(c) {
			return fmt.Errorf("color %q: give one of %s", c, strings.Join(classes, ", "))
		}
	}
	if _, _, ok := percentRange(s.Brightness); s.Brightness != "" && !ok {
		return fmt.Errorf("brightness %q: give a percent 1-100, or a range such as 30-60", s.Brightness)
	}
	for _, c := range s.Clicks {
		if !knownClass(c) {
			return fmt.Errorf("clicks: color %q: give one of %s", c, strings.Join(classes, ", "))
		}
	}
	if s.GPIO != nil && s.GPIO.Level != 0 && s.GPIO.Level != 1 {
		return fmt.Errorf("gpio level %d: give 0 or 1", s.GPIO.Level)
	}
	return nil
}

// describe names a step in a failure: "step 3 (fire button_click)".
func (s Step) describe(i int) string {
	var what string
	switch {
	case s.Ask != "":
		what = fmt.Sprintf("ask %q", clip.Line(s.Ask, 40, "…"))
	case s.Fire != "":
		what = "fire " + s.Fire
	case len(s.Clicks) > 0:
		what = fmt.Sprintf("%d clicks", len(s.Clicks))
	case s.Wait != "":
		what = "wait " + s.Wait
	case s.Data != nil:
		what = "data from " + s.Data.Source
	case s.SetAPI != nil:
		what = "api"
	case s.MQTT != nil:
		what = "mqtt " + s.MQTT.Topic
	case s.NATS != nil:
		what = "nats " + s.NATS.Subject
	case s.GPIO != nil:
		what = fmt.Sprintf("gpio %d=%d", s.GPIO.Pin, s.GPIO.Level)
	case s.Webhook != nil:
		what = strings.TrimSpace("webhook " + s.Webhook.Source)
	default:
		what = "check"
	}
	return fmt.Sprintf("step %d (%s)", i+1, what)
}

// percentRange reads a brightness check: N, or a range lo-hi, within
// 1-100.
func percentRange(s string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	if !isRange {
		b = a
	}
	lo, errA := strconv.Atoi(strings.TrimSpace(a))
	hi, errB := strconv.Atoi(strings.TrimSpace(b))
	return lo, hi, errA == nil && errB == nil && lo >= 1 && lo <= hi && hi <= 100
}
