package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/messages"
)

// Duration is a time.Duration flag that also accepts plain seconds.
type Duration time.Duration

// String is the duration as a flag shows it; "0" for none, which the
// help then leaves out as pflag does for its own zero defaults.
func (d *Duration) String() string {
	if *d == 0 {
		return "0"
	}
	return time.Duration(*d).String()
}

func (d *Duration) Type() string { return "duration" }

func (d *Duration) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		*d = Duration(time.Duration(n * float64(time.Second)))
		return nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil {
			*d = Duration(time.Duration(n * float64(24*time.Hour)))
			return nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("a duration like 10s, 500ms, 2h or 7d")
	}
	*d = Duration(v)
	return nil
}

// Past are --seq and --at: a light as it was.
type Past struct {
	seq uint64
	at  string
}

// Add adds --seq and --at to cmd.
func (p *Past) Add(cmd *cobra.Command) {
	cmd.Flags().Uint64Var(&p.seq, "seq", 0, "as it was right after input `N` (an output's seq names its input)")
	cmd.Flags().StringVar(&p.at, "at", "", "as it was at `TIME`: 2026-11-25T08:00:00Z, HH:MM[:SS] (local time, today or yesterday if still to come) or 90m (ago)")
}

// parseWhen reads a time: RFC 3339, HH:MM[:SS] in local time (today, or
// yesterday when that time is still to come today: the past is asked
// for), or a duration ago.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"15:04", "15:04:05"} {
		t, err := time.ParseInLocation(layout, s, now.Location())
		if err != nil {
			continue
		}
		y, m, d := now.Date()
		at := time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), now.Location())
		if at.After(now) {
			at = time.Date(y, m, d-1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), now.Location())
		}
		return at, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is no time: write 2026-11-25T08:00:00Z, HH:MM[:SS] in local time (21:14:40: today's, or yesterday's if still to come) or 90m (ago)", s)
}

// Request is the get request the flags ask for.
func (p *Past) Request() (messages.GetRequest, error) {
	q := messages.GetRequest{Seq: p.seq}
	if p.at == "" {
		return q, nil
	}
	if p.seq != 0 {
		return q, Usage(errors.New("give --seq or --at, not both"))
	}
	at, err := parseWhen(p.at, time.Now())
	if err != nil {
		return q, Usage(fmt.Errorf("--at: %w", err))
	}
	q.At = &at
	return q, nil
}
