package describe

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// LightRow is one light of `lumen ls`: what it answered, or why it did
// not.
type LightRow struct {
	Light string
	// Err says why a running light gave no model; Absent why a light of
	// the house does not answer at all (Unreachable's words). Either
	// leaves the other fields empty.
	Err, Absent string
	State       string
	Color       string // #rrggbb before gamma and the cap; "" unknown
	LastInput   string // the type of its last input; "" unknown
	LastAt      time.Time
	Sources     int
	Agent       *bool // nil unknown
	Groups      []string
}

// Lights is the table of `lumen ls`, as of now.
func Lights(w io.Writer, rows []LightRow, now time.Time) error {
	tw := table(w)
	fmt.Fprintln(tw, "LIGHT\tSTATE\tCOLOR\tLAST INPUT\tSOURCES\tAGENT\tGROUPS")
	for _, l := range rows {
		switch {
		case l.Err != "":
			fmt.Fprintf(tw, "%s\t(%s)\n", l.Light, l.Err)
			continue
		case l.Absent != "":
			fmt.Fprintf(tw, "%s\t%s\n", l.Light, l.Absent)
			continue
		}
		last := "-"
		if l.LastInput != "" {
			last = fmt.Sprintf("%s, %s ago", l.LastInput, now.Sub(l.LastAt).Round(time.Second))
		}
		agent := "-"
		if l.Agent != nil {
			agent = map[bool]string{true: "on", false: "off"}[*l.Agent]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", l.Light, l.State, cell(l.Color), last, l.Sources, agent, cell(strings.Join(l.Groups, ",")))
	}
	return tw.Flush()
}

// Unreachable says why a light of the house does not answer: its Pi is
// connected but does not run it, or its Pi is away since since.
func Unreachable(pi string, connected bool, since, now time.Time) string {
	if connected {
		return fmt.Sprintf("unreachable: not running on its Pi %s, which is connected", pi)
	}
	return fmt.Sprintf("unreachable: its Pi %s is disconnected since %s", pi, Ago(since, now))
}

// Ago is a time of day (local) and how long before now it was; "?"
// unknown.
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return fmt.Sprintf("%s (%s ago)", t.Local().Format("15:04:05"), now.Sub(t).Round(time.Second))
}
