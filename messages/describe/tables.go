package describe

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
)

// Tables of a light's model, as lumen states, rules, vars and schedule ls
// print them: one row each, long cells clipped to a line.

// cellWidth bounds a cell (an expression, a value) so a row fits a line.
const cellWidth = 40

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

func cell(s string) string {
	if s == "" {
		return "-"
	}
	return clip.Line(s, cellWidth, "…")
}

// States writes the light's states; the current one is marked *.
func States(w io.Writer, g messages.GetReply) error {
	t := table(w)
	fmt.Fprintln(t, "\tNAME\tR\tG\tB\tSPEED\tDESCRIPTION")
	for _, s := range g.States {
		mark, speed := "", "-"
		if s.Name == g.State {
			mark = "*"
		}
		if s.Speed != nil {
			speed = strconv.Itoa(*s.Speed) + "ms"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", mark, s.Name, channel(s.R), channel(s.G), channel(s.B), speed, cell(s.Description))
	}
	return t.Flush()
}

func channel(c messages.Channel) string {
	if c.IsExpr() {
		return cell(c.Expr)
	}
	return strconv.FormatFloat(c.Num, 'f', -1, 64)
}

// Rules writes the light's rules in the order they are tried within a
// priority: id, from, on, to, condition, action, priority, enabled.
func Rules(w io.Writer, rules []messages.Rule) error {
	t := table(w)
	fmt.Fprintln(t, "ID\tFROM\tON\tTO\tCONDITION\tACTION\tPRIORITY\tENABLED")
	for _, r := range rules {
		enabled := "yes"
		if !r.Enabled {
			enabled = "no"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.From, r.On, r.To, cell(r.Condition), cell(r.Action), r.Priority, enabled)
	}
	return t.Flush()
}

// Layers writes the light's temporary layers, in the order their rules
// are tried (the newest first): name, what is left of its lifetime,
// whether it restores, the state it began in, then its rules, indented.
func Layers(w io.Writer, layers []messages.Layer, now time.Time) error {
	t := table(w)
	fmt.Fprintln(t, "NAME\tENDS\tRESTORES\tBEGAN IN\tRULES")
	for _, l := range layers {
		ends := ""
		switch {
		case l.FiresLeft != nil && *l.FiresLeft == 0:
			ends = "at the next input its rules match"
		case l.FiresLeft != nil:
			ends = fmt.Sprintf("after %d more firings", *l.FiresLeft)
		case l.Deadline != nil:
			ends = "at " + l.Deadline.Local().Format("2006-01-02 15:04:05")
			if left := l.Deadline.Sub(now).Round(time.Second); left > 0 {
				ends += fmt.Sprintf(" (in %s)", left)
			}
		default:
			ends = "after an input when " + clip.Line(l.Until, cellWidth, "…")
		}
		restores := "yes"
		if !l.Restore {
			restores = "no"
		}
		ids := make([]string, len(l.Rules))
		for i, r := range l.Rules {
			ids[i] = r.ID
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", l.Name, ends, restores, l.BeganState, strings.Join(ids, " "))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, l := range layers {
		fmt.Fprintf(w, "\nlayer %s:\n", l.Name)
		if err := Rules(w, l.Rules); err != nil {
			return err
		}
	}
	return nil
}

// Vars writes the light's variables by name, each value as JSON.
func Vars(w io.Writer, vars map[string]json.RawMessage) error {
	t := table(w)
	fmt.Fprintln(t, "NAME\tVALUE")
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		fmt.Fprintf(t, "%s\t%s\n", name, cell(strings.TrimSpace(string(vars[name]))))
	}
	return t.Flush()
}

// Schedules writes the light's schedules: when (a cron, or a time of the
// sun), where (a cron's zone, UTC for one journaled without tz; a sun
// schedule's place), and the next tick in local time, the reader's, with
// why it is days away for a sun that does not rise or set until then
// (now is the reader's time).
func Schedules(w io.Writer, list []messages.Schedule, now time.Time) error {
	t := table(w)
	fmt.Fprintln(t, "NAME\tWHEN\tWHERE\tFIRES\tNEXT")
	for _, s := range list {
		next := "-"
		if s.Next != nil {
			next = s.Next.Local().Format("2006-01-02 15:04 MST")
		}
		when, where := s.Cron, s.Zone()
		if s.Sun != "" {
			when, where = strings.TrimSpace(s.Sun+" "+s.Offset), "-"
			if s.Lat != nil && s.Lon != nil {
				where = fmt.Sprintf("%.4g,%.4g", *s.Lat, *s.Lon)
			}
			next += sunGap(s, now)
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", s.Name, when, where, s.Fires, next)
	}
	return t.Flush()
}

// sunGap says why a sun schedule's next time is days away: the sun does
// not rise or set there until then (a polar night or day), or "".
func sunGap(s messages.Schedule, now time.Time) string {
	switch {
	case s.Next == nil:
		return " (no " + s.Sun + " there within a year)"
	case s.Next.Sub(now) > 36*time.Hour:
		return " (no " + s.Sun + " there before then)"
	}
	return ""
}

// Intents writes the light's learned intents by phrase: what each does,
// and when it was learned (local time).
func Intents(w io.Writer, list []messages.Intent) error {
	t := table(w)
	fmt.Fprintln(t, "PHRASE\tACTION\tLEARNED")
	for _, in := range list {
		fmt.Fprintf(t, "%s\t%s %s\t%s\n", cell(in.Phrase), in.Verb, in.Arg, in.Learned.Local().Format("2006-01-02 15:04"))
	}
	return t.Flush()
}

// Functions writes the light's custom functions, one a line: the call,
// what it does, and its code's first line (… when there are more).
func Functions(w io.Writer, list []messages.Function) error {
	t := table(w)
	fmt.Fprintln(t, "FUNCTION\tDESCRIPTION\tCODE")
	for _, f := range list {
		code, _, more := strings.Cut(strings.TrimSpace(f.Code), "\n")
		if more {
			code += " …"
		}
		desc := f.Description
		if desc == "" {
			desc = "-"
		}
		fmt.Fprintf(t, "%s(%s)\t%s\t%s\n", f.Name, strings.Join(f.Params, ", "), desc, clip.To(code, 60, "…"))
	}
	return t.Flush()
}

// History is the table of a light's configuration changes: sequence,
// time (local), who made it, what changed.
func History(w io.Writer, h messages.HistoryReply) error {
	if len(h.Changes) == 0 {
		_, err := fmt.Fprintf(w, "light %s has no configuration change in its journal\n", h.Light)
		return err
	}
	tw := table(w)
	fmt.Fprintln(tw, "SEQ\tTIME\tBY\tCHANGES")
	for _, c := range h.Changes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", c.Seq, c.Time.Local().Format("2006-01-02 15:04:05"), c.By, c.Summary)
	}
	return tw.Flush()
}
