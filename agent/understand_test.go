package agent_test

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/messages/color"
)

// corpusCase is one line of a corpus: a sentence and what it must do
// ("kitchen off"), or "model".
type corpusCase struct {
	line     int
	sentence string
	want     string
}

func readCorpus(t testing.TB, path string) []corpusCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s, want, ok := strings.Cut(line, "=>")
		if !ok {
			t.Fatalf("%s:%d: no =>: %q", path, n, line)
		}
		out = append(out, corpusCase{n, strings.TrimSpace(s), strings.Join(strings.Fields(want), " ")})
	}
	return out
}

// testWorld is the house the corpora speak to (testdata/understand/world.json).
func testWorld(t testing.TB) *agent.World {
	t.Helper()
	b, err := os.ReadFile("testdata/understand/world.json")
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		SaidTo string        `json:"said_to"`
		Lights []agent.Named `json:"lights"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return agent.NewWorld(w.SaidTo, w.Lights)
}

// said is what the understanding made of a sentence, as the corpus
// writes it.
func said(r agent.Reading) string {
	if r.Outcome != agent.Understood {
		return "model"
	}
	return r.Command.String()
}

// same compares a reading with the corpus's expectation, colors by
// their RGB ("color light blue" is "color lightblue").
func same(got, want string) bool {
	if got == want {
		return true
	}
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) < 3 || len(w) < 3 || g[0] != w[0] || g[1] != "color" || w[1] != "color" {
		return false
	}
	split := func(f []string) (string, string) {
		name := strings.Join(f[2:], " ")
		if i := strings.Index(name, " fade "); i >= 0 {
			return name[:i], name[i:]
		}
		return name, ""
	}
	gn, gf := split(g)
	wn, wf := split(w)
	if gf != wf {
		return false
	}
	gc, err1 := color.Parse(gn)
	wc, err2 := color.Parse(wn)
	return err1 == nil && err2 == nil && gc == wc
}

// score runs a corpus: the share of its local sentences carried out as
// expected, and the share of its model sentences taken locally.
func score(t *testing.T, path string, verbose bool) (local, wrongly float64, nLocal, nModel int) {
	w := testWorld(t)
	var okLocal, takenModel int
	for _, c := range readCorpus(t, path) {
		got := said(w.Understand(c.sentence))
		if c.want == "model" {
			nModel++
			if got != "model" {
				takenModel++
				if verbose {
					t.Logf("%s:%d: %q taken locally as %q; want model", path, c.line, c.sentence, got)
				}
			}
			continue
		}
		nLocal++
		if same(got, c.want) {
			okLocal++
		} else if verbose {
			t.Logf("%s:%d: %q: got %q, want %q", path, c.line, c.sentence, got, c.want)
		}
	}
	return float64(okLocal) / float64(max(nLocal, 1)), float64(takenModel) / float64(max(nModel, 1)), nLocal, nModel
}

// TestUnderstandCorpus: the corpus written for tuning. Goals: at least
// 95% of the everyday sentences carried out as written, none of those
// for the model taken locally.
func TestUnderstandCorpus(t *testing.T) {
	local, wrongly, nl, nm := score(t, "testdata/understand/corpus.txt", true)
	t.Logf("corpus: %d everyday sentences, %.1f%% carried out as expected; %d for the model, %.1f%% taken locally", nl, 100*local, nm, 100*wrongly)
	if nl < 400 || nm < 200 {
		t.Errorf("the corpus has %d everyday and %d model sentences; it needs at least 400 and 200", nl, nm)
	}
	if local < 0.95 {
		t.Errorf("%.1f%% of the everyday sentences understood; the goal is 95%%", 100*local)
	}
	if wrongly > 0 {
		t.Errorf("%.1f%% of the model's sentences taken locally; the goal is none", 100*wrongly)
	}
}

// TestUnderstandHeldOut: the corpus written before tuning and never
// tuned to. Its figure is reported, not tuned: the floors only catch a
// regression.
func TestUnderstandHeldOut(t *testing.T) {
	local, wrongly, nl, nm := score(t, "testdata/understand/heldout.txt", testing.Verbose() && os.Getenv("LUMEN_HELDOUT_DETAIL") != "")
	t.Logf("held out: %d everyday sentences, %.1f%% carried out as expected; %d for the model, %.1f%% taken locally", nl, 100*local, nm, 100*wrongly)
	if nl < 150 || nm < 50 {
		t.Errorf("the held-out corpus has %d everyday and %d model sentences", nl, nm)
	}
	if local < 0.9 || wrongly > 0 {
		t.Errorf("held out: %.1f%% understood (floor 90%%), %.1f%% of the model's taken locally (none allowed)", 100*local, 100*wrongly)
	}
}

func BenchmarkUnderstand(b *testing.B) {
	w := testWorld(b)
	cases := readCorpus(b, "testdata/understand/corpus.txt")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Understand(cases[i%len(cases)].sentence)
	}
}

// Whatever is said, the understanding answers without panicking, and
// what it takes is a command the everyday tools accept: one tool, a
// brightness in range, a fade within a day.
func FuzzUnderstand(f *testing.F) {
	w := testWorld(f)
	for _, c := range readCorpus(f, "testdata/understand/corpus.txt")[:40] {
		f.Add(c.sentence)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r := w.Understand(text)
		if r.Outcome != agent.Understood {
			return
		}
		c := r.Command
		switch {
		case c.Tool == "":
			t.Fatalf("%q: no tool", text)
		case c.Tool == agent.ToolSetBrightness && c.Delta == 0 && (c.Percent < 1 || c.Percent > 100):
			t.Fatalf("%q: brightness %d", text, c.Percent)
		case c.Fade && (c.FadeMs < 0 || c.FadeMs > 24*60*60*1000):
			t.Fatalf("%q: fade %d ms", text, c.FadeMs)
		case len(c.Target.Lights) == 0 && !c.Target.All && c.Target.Group == "":
			t.Fatalf("%q: no target", text)
		}
	})
}
