package main_test

import (
	"regexp"
	"strings"
	"testing"
)

// Errors send the user only to commands and ids that exist: a state is
// created with lumen state add, a refused rule is named as written, a
// missing layer with the layers there are (issue 26, item 6).
func TestErrorsNameWhatExists(t *testing.T) {
	d := startDaemon(t, t.TempDir())
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"state", "orange"}, 1, `state "orange" does not exist; create it first ('lumen state add'), or pick one of: off, red`},
		{[]string{"state", "add", "orange", "255", "140", "0", "--description", "warm"}, 0, "config create state: state orange"},
		{[]string{"state", "orange"}, 0, "off → orange"},
		{[]string{"state", "add", "breathe", "0", "0", "128 + 127 * Math.sin(frame / 10)", "--speed", "50"}, 0, "breathe"},
		{[]string{"state", "add", "bad", "1", "2"}, 2, "accepts 4 arg(s)"},
		{[]string{"states"}, 0, "warm"},
		{[]string{"rule", "add", "off", "button_click", "nosuch"}, 1, `rule off --button_click--> nosuch: to names state "nosuch", which does not exist`},
		{[]string{"layer", "rm", "nope"}, 1, `layer "nope" does not exist (it may have ended already); the light has no layers`},
		{[]string{"state", "rm", "breathe"}, 0, "breathe"},
		{[]string{"state", "rm", "off"}, 1, "recolor it with 'lumen state add' instead"},
	} {
		out, code := runCLI(t, d.URL, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("lumen %s: exit %d, want %d with %q:\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, out)
		}
		if id := regexp.MustCompile(`rule r\d+ \(rules|rules\[0\]|get lists`).FindString(out); id != "" {
			t.Errorf("lumen %s names %q, which the user cannot find:\n%s", strings.Join(tc.args, " "), id, out)
		}
	}
}
