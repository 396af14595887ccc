package eval

import (
	"fmt"
	"io"
	"slices"
)

// Summary is one model's results over the suite.
type Summary struct {
	Model         string  `json:"model"`
	Runs          int     `json:"runs"`
	Passed        int     `json:"passed"`
	PassRate      float64 `json:"pass_rate"`
	MedianTurns   float64 `json:"median_turns"`
	MedianSeconds float64 `json:"median_seconds"`
	Tokens        int     `json:"tokens"`
}

// Summarize groups results by model, in the order the models ran.
func Summarize(results []Result) []Summary {
	var out []Summary
	by := map[string][]Result{}
	for _, r := range results {
		if _, ok := by[r.Model]; !ok {
			out = append(out, Summary{Model: r.Model})
		}
		by[r.Model] = append(by[r.Model], r)
	}
	for i := range out {
		s := &out[i]
		rs := by[s.Model]
		var turns, secs []float64
		for _, r := range rs {
			s.Runs++
			if r.Pass {
				s.Passed++
			}
			s.Tokens += r.Tokens
			turns = append(turns, float64(r.Turns))
			secs = append(secs, r.Seconds)
		}
		s.PassRate = float64(s.Passed) / float64(s.Runs)
		s.MedianTurns, s.MedianSeconds = median(turns), median(secs)
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

// Line is a result as one line of the report: pass or fail, the case,
// the model's turns, the tokens, the time, and what differed.
func (r Result) Line() string {
	verdict := "pass"
	if !r.Pass {
		verdict = "FAIL"
	}
	tokens := "-"
	if r.Tokens > 0 {
		tokens = fmt.Sprint(r.Tokens)
	}
	line := fmt.Sprintf("%s  %-18s %2d turns  %6s tokens  %5.1f s", verdict, r.Case, r.Turns, tokens, r.Seconds)
	if r.Run > 1 {
		line += fmt.Sprintf("  (run %d)", r.Run)
	}
	if !r.Pass {
		line += "\n      " + r.Failure
	}
	return line
}

// String is a summary as the report's last lines say it.
func (s Summary) String() string {
	return fmt.Sprintf("%s: %d/%d passed (%.0f%%), median %.1f turns, %.1f s a case, %d tokens in all",
		s.Model, s.Passed, s.Runs, 100*s.PassRate, s.MedianTurns, s.MedianSeconds, s.Tokens)
}

// EverydaySummary is one mode's results over an everyday corpus.
type EverydaySummary struct {
	Mode     string  `json:"mode"`
	Everyday int     `json:"everyday"` // the cases with a command
	Passed   int     `json:"passed"`   // of them, carried out as expected
	PassRate float64 `json:"pass_rate"`
	// ForModel are the cases for the model; Refused, of them, those the
	// light refused and left the lights alone (judged in mode Local
	// only).
	ForModel int `json:"for_model"`
	Refused  int `json:"refused"`
	// Asked is how many cases the model was called for (the light
	// carries out what it understands itself, model or not).
	Asked   int     `json:"model_asked"`
	Tokens  int     `json:"tokens"`
	Seconds float64 `json:"seconds"`
}

// SummarizeEveryday groups everyday results by mode, in the order the
// modes ran.
func SummarizeEveryday(results []EverydayResult) []EverydaySummary {
	var out []EverydaySummary
	at := map[string]int{}
	for _, r := range results {
		i, ok := at[r.Mode]
		if !ok {
			i = len(out)
			at[r.Mode] = i
			out = append(out, EverydaySummary{Mode: r.Mode})
		}
		s := &out[i]
		s.Seconds += r.Seconds
		s.Tokens += r.Tokens
		if r.Turns > 0 {
			s.Asked++
		}
		switch {
		case r.Want == "model":
			s.ForModel++
			if r.Judged && r.Pass {
				s.Refused++
			}
		default:
			s.Everyday++
			if r.Pass {
				s.Passed++
			}
		}
	}
	for i := range out {
		out[i].PassRate = float64(out[i].Passed) / float64(max(out[i].Everyday, 1))
	}
	return out
}

// String is a mode's line of the everyday report.
func (s EverydaySummary) String() string {
	line := fmt.Sprintf("%-14s %4d/%d everyday commands carried out (%.1f%%)", s.Mode, s.Passed, s.Everyday, 100*s.PassRate)
	if s.Mode == Local {
		line += fmt.Sprintf("; %d/%d for the model refused, nothing changed", s.Refused, s.ForModel)
	} else {
		line += fmt.Sprintf("; the model asked for %d, %d tokens; %d for the model not judged", s.Asked, s.Tokens, s.ForModel)
	}
	return line + fmt.Sprintf("; %.1f s", s.Seconds)
}

// String is a failed everyday result as the report lists it.
func (r EverydayResult) String() string {
	return fmt.Sprintf("%s  line %d: %q => %s\n      got: %s", r.Mode, r.Line, r.Sentence, r.Want, r.Got)
}

// WriteEveryday writes the everyday report: the failures, mode by mode,
// then a line per mode, side by side.
func WriteEveryday(w io.Writer, corpus string, results []EverydayResult) {
	for _, r := range results {
		if r.Judged && !r.Pass {
			fmt.Fprintln(w, "FAIL", r)
		}
	}
	fmt.Fprintf(w, "\n%s:\n", corpus)
	for _, s := range SummarizeEveryday(results) {
		fmt.Fprintln(w, s)
	}
}
