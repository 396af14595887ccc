package cli

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/color"
)

// Fade is --fade of the everyday commands: how long the change fades.
type Fade struct {
	D   time.Duration
	Set bool // given: 0 is then a cut, not the light's default
}

// Add adds --fade to cmd.
func (f *Fade) Add(fs *pflag.FlagSet) {
	fs.Var(fadeValue{f}, "fade", "fade into it over this long, e.g. 2s or 30m (default the light's transition_ms; 0: a cut)")
}

// Ms is the fade_ms of a request: nil when --fade was not given.
func (f *Fade) Ms() *int {
	if !f.Set {
		return nil
	}
	ms := int(f.D / time.Millisecond)
	return &ms
}

type fadeValue struct{ f *Fade }

func (v fadeValue) String() string {
	if v.f == nil || !v.f.Set {
		return ""
	}
	return v.f.D.String()
}
func (v fadeValue) Type() string { return "duration" }
func (v fadeValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > messages.MaxFadeMs*time.Millisecond {
		return fmt.Errorf("--fade %q: give a duration from 0 to 24h, like 2s or 30m", s)
	}
	v.f.D, v.f.Set = d, true
	return nil
}

// Power switches the light (or the fleet, or a group) on or off.
func (t *Term) Power(ctx context.Context, on bool, fade *int) error {
	return t.Mutate(ctx, messages.VerbPower, messages.PowerRequest{On: &on, FadeMs: fade})
}

// Brightness prints the light's dimmer, or sets it: "40" (or "40%") sets
// it, "+10" and "-10" step it.
func (t *Term) Brightness(ctx context.Context, args []string, fade *int) error {
	if len(args) == 0 {
		g, err := t.Get(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(t.Stdout, "%d%%\n", g.Brightness)
		return nil
	}
	q, err := BrightnessRequest(args[0])
	if err != nil {
		return Usage(err)
	}
	q.FadeMs = fade
	return t.Mutate(ctx, messages.VerbSetBrightness, q)
}

// BrightnessRequest reads the argument of lumen brightness: "40" or
// "40%" sets the dimmer, "+10" and "-10" step it.
func BrightnessRequest(arg string) (messages.BrightnessRequest, error) {
	s := strings.TrimSuffix(strings.TrimSpace(arg), "%")
	n, err := strconv.Atoi(s)
	if err != nil {
		return messages.BrightnessRequest{}, fmt.Errorf("brightness %q is not a number: give a percent 1 to 100 (40), or a step (+10, -10)", arg)
	}
	if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
		return messages.BrightnessRequest{Delta: &n}, nil
	}
	return messages.BrightnessRequest{Percent: &n}, nil
}

// Color shows a color given as lumen color takes it.
func (t *Term) Color(ctx context.Context, args []string, fade *int) error {
	q, err := ColorRequest(args)
	if err != nil {
		return Usage(err)
	}
	q.FadeMs = fade
	return t.Mutate(ctx, messages.VerbSetColor, q)
}

// ColorRequest reads the arguments of lumen color: a name (in one
// argument or several: warm white), a hex (#ffa500 or ffa500), a
// temperature (2700K) or three numbers r g b. It says how it was given,
// so the light's journal reads "orange", not only numbers.
func ColorRequest(args []string) (messages.ColorRequest, error) {
	c, err := color.Parse(args...)
	if err != nil {
		return messages.ColorRequest{}, err
	}
	s := strings.Join(strings.Fields(strings.Join(args, " ")), " ")
	if _, ok := color.Named(s); ok {
		return messages.ColorRequest{Name: s}, nil
	}
	if k, ok := strings.CutSuffix(strings.ToLower(strings.ReplaceAll(s, " ", "")), "k"); ok {
		if n, err := strconv.Atoi(k); err == nil {
			return messages.ColorRequest{Kelvin: &n}, nil
		}
	}
	if len(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })) == 3 {
		r, g, b := int(c.R), int(c.G), int(c.B)
		return messages.ColorRequest{R: &r, G: &g, B: &b}, nil
	}
	return messages.ColorRequest{Hex: c.Hex()}, nil
}

// negative is an argument that is a negative number, not a flag.
var negative = regexp.MustCompile(`^-[0-9]+(\.[0-9]+)?%?$`)

// Negatives keeps a negative number that follows a word (lumen
// brightness -10, lumen var set n -3) from being read as a flag: it gets
// a leading space, which the flags parser leaves alone and the commands'
// number parsing ignores. A number after a flag is that flag's value
// and stays as it is.
func Negatives(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if negative.MatchString(a) && i > 0 && !strings.HasPrefix(args[i-1], "-") {
			out[i] = " " + a
		}
	}
	return out
}
