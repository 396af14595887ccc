package eval

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/messages/color"
)

// The everyday suite: a corpus of everyday light commands ("turn off the
// kitchen light", "a bit brighter", "fade to blue over 2 minutes"), each
// said to one light of a house of eight, each judged by what the lights
// do afterwards. Without a model it measures the daemon's own (local)
// understanding; with one, the light as it runs with that model.

// Everyday is a corpus and the house it speaks to.
type Everyday struct {
	Name   string
	SaidTo string        // the light every sentence is said to
	Lights []agent.Named // the house, by name
	Cases  []EverydayCase
}

// EverydayCase is one line of a corpus: a sentence and what it must do
// ("kitchen off"), or "model": the local understanding must refuse it.
type EverydayCase struct {
	Line     int
	Sentence string
	Want     string

	lights []string // what it acts on, sorted; none for the model
	act    expect
}

// ForModel reports whether the case is the model's: no local command.
func (c EverydayCase) ForModel() bool { return c.lights == nil }

// expect is what a case must do to each of its lights.
type expect struct {
	verb  string // on, off, toggle, brightness, color, state, click
	n     int    // brightness: percent, or step when rel
	rel   bool
	rgb   color.RGB // color
	state string    // state
	fade  int       // ms; 0: none
}

// BuiltinEveryday is the corpus the local understanding is tuned on
// (agent/testdata/understand/corpus.txt), in the binary.
func BuiltinEveryday() (Everyday, error) {
	return ParseEveryday("corpus.txt", agent.EverydayCorpus())
}

// LoadEveryday reads another corpus of the same house (the held-out one,
// or one of your own).
func LoadEveryday(path string) (Everyday, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Everyday{}, fmt.Errorf("eval: %w", err)
	}
	return ParseEveryday(path, b)
}

// ParseEveryday reads a corpus, one "SENTENCE => EXPECTATION" a line
// (# starts a comment), and checks each expectation against the house.
func ParseEveryday(name string, b []byte) (Everyday, error) {
	saidTo, lights, err := agent.EverydayHouse()
	if err != nil {
		return Everyday{}, fmt.Errorf("eval: %w", err)
	}
	slices.SortFunc(lights, func(a, b agent.Named) int { return strings.Compare(a.Light, b.Light) })
	e := Everyday{Name: name, SaidTo: saidTo, Lights: lights}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, want, ok := strings.Cut(line, "=>")
		if !ok || strings.TrimSpace(s) == "" {
			return Everyday{}, fmt.Errorf("eval: %s:%d: give SENTENCE => EXPECTATION, not %q", name, n, line)
		}
		c := EverydayCase{Line: n, Sentence: strings.TrimSpace(s), Want: strings.Join(strings.Fields(want), " ")}
		if err := e.read(&c); err != nil {
			return Everyday{}, fmt.Errorf("eval: %s:%d: %q: %w", name, n, c.Want, err)
		}
		e.Cases = append(e.Cases, c)
	}
	if err := sc.Err(); err != nil {
		return Everyday{}, fmt.Errorf("eval: %s: %w", name, err)
	}
	if len(e.Cases) == 0 {
		return Everyday{}, fmt.Errorf("eval: %s: no cases", name)
	}
	return e, nil
}

// read fills in what c.Want names: TARGET ACTION [fade MS].
func (e *Everyday) read(c *EverydayCase) error {
	if c.Want == "model" {
		return nil
	}
	f := strings.Fields(c.Want)
	if len(f) < 2 {
		return fmt.Errorf("give model, or TARGET ACTION [fade MS]")
	}
	if n := len(f); n >= 4 && f[n-2] == "fade" {
		ms, err := strconv.Atoi(f[n-1])
		if err != nil || ms <= 0 {
			return fmt.Errorf("fade %q: give milliseconds", f[n-1])
		}
		c.act.fade, f = ms, f[:n-2]
	}
	lights, err := e.target(f[0])
	if err != nil {
		return err
	}
	c.lights = lights
	a := &c.act
	a.verb = f[1]
	args := f[2:]
	switch a.verb {
	case "on", "off", "toggle", "click":
		if len(args) > 0 {
			return fmt.Errorf("%s takes nothing after it", a.verb)
		}
	case "brightness":
		if len(args) != 1 {
			return fmt.Errorf("give brightness N, +N or -N")
		}
		a.rel = strings.HasPrefix(args[0], "+") || strings.HasPrefix(args[0], "-")
		if a.n, err = strconv.Atoi(args[0]); err != nil || !a.rel && (a.n < 1 || a.n > 100) {
			return fmt.Errorf("brightness %q: give 1 to 100, +N or -N", args[0])
		}
	case "color":
		if a.rgb, err = color.Parse(args...); err != nil {
			return err
		}
	case "state":
		if len(args) != 1 {
			return fmt.Errorf("give state NAME")
		}
		a.state = args[0]
		for _, l := range c.lights {
			if !slices.Contains(e.light(l).States, a.state) {
				return fmt.Errorf("light %s has no state %s", l, a.state)
			}
		}
	default:
		return fmt.Errorf("action %q: give on, off, toggle, brightness, color, state or click", a.verb)
	}
	return nil
}

// target reads a case's TARGET: a light, lights joined by commas,
// group:NAME or all.
func (e *Everyday) target(t string) ([]string, error) {
	var out []string
	switch {
	case t == agent.TargetAll:
		for _, l := range e.Lights {
			out = append(out, l.Light)
		}
	case strings.HasPrefix(t, "group:"):
		g := strings.TrimPrefix(t, "group:")
		for _, l := range e.Lights {
			if slices.Contains(l.Groups, g) {
				out = append(out, l.Light)
			}
		}
		if out == nil {
			return nil, fmt.Errorf("no light is in group %s", g)
		}
	default:
		for _, l := range strings.Split(t, ",") {
			if e.light(l).Light == "" {
				return nil, fmt.Errorf("no light %s in the house", l)
			}
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out, nil
}

// light is the house's light called name (zero when there is none).
func (e *Everyday) light(name string) agent.Named {
	i := slices.IndexFunc(e.Lights, func(l agent.Named) bool { return l.Light == name })
	if i < 0 {
		return agent.Named{}
	}
	return e.Lights[i]
}
