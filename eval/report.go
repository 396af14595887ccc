package eval

import (
	"fmt"
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
