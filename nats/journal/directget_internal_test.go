package journal

import "testing"

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		filter string
		subs   []string
		want   bool
	}{
		{"lumen.a.evt.>", []string{"lumen.a.evt.>"}, true},
		{"lumen.*.evt.>", []string{"lumen.a.evt.>", "lumen.b.evt.>"}, true},
		{"lumen.a.evt.>", []string{"lumen.a.evt.>", "lumen.b.evt.>"}, false},
		{"lumen.a.evt.in.>", []string{"lumen.a.evt.>"}, false},
		{"lumen.*.evt.>", []string{"lumen.*.evt.>"}, true},
		{"lumen.a.evt.>", []string{"lumen.*.evt.>"}, false},
		{"lumen.*.*", []string{"lumen.a.>"}, false},
		{">", []string{"a.b", "c"}, true},
		{"", []string{"a"}, false},
	} {
		if got := covers(tc.filter, tc.subs); got != tc.want {
			t.Errorf("covers(%q, %v) = %v, want %v", tc.filter, tc.subs, got, tc.want)
		}
	}
}
