package describe_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages/describe"
)

// A state inserted among others is one hunk of its lines, with three
// lines of context, not a pairing of the lines of unrelated states.
func TestDiff(t *testing.T) {
	state := func(name, r, g, b string) string {
		return "  - name: " + name + "\n    r: " + r + "\n    g: " + g + "\n    b: " + b + "\n"
	}
	rules := "rules:\n  - id: r1\n    from: off\n    on: button_click\n    to: red\n"
	before := "initial: off\nstates:\n" + state("red", "255", "0", "0") + state("green", "0", "255", "0") + state("blue", "0", "0", "255") + rules
	after := "initial: off\nstates:\n" + state("red", "255", "0", "0") + state("cosy", "255", "140", "40") + state("green", "0", "255", "0") + state("blue", "0", "0", "255") + rules
	want := `--- demo after input 2
+++ demo after input 7
@@ -4,6 +4,10 @@
     r: 255
     g: 0
     b: 0
+  - name: cosy
+    r: 255
+    g: 140
+    b: 40
   - name: green
     r: 0
     g: 255
`
	if got := describe.Diff("demo after input 2", "demo after input 7", before, after); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Two changes far apart are two hunks; nothing changed is nothing.
	far := strings.Replace(strings.Replace(before, "g: 0\n", "g: 1\n", 1), "to: red", "to: blue", 1)
	if got := describe.Diff("a", "b", before, far); strings.Count(got, "@@ -") != 2 || strings.Contains(got, "name: blue") {
		t.Errorf("two changes far apart:\n%s", got)
	}
	if got := describe.Diff("a", "b", before, before); got != "" {
		t.Errorf("no change: %q", got)
	}
}

func TestConfigLabel(t *testing.T) {
	for _, c := range []struct {
		name string
		seq  uint64
		want string
	}{
		{"after an input", 7, "light demo after input 7"},
		{"before any configuration", 0, "light demo before any configuration"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := describe.ConfigLabel("demo", c.seq); got != c.want {
				t.Errorf("ConfigLabel(demo, %d) = %q, want %q", c.seq, got, c.want)
			}
		})
	}
}
