package daemon

import (
	"os"
	"strings"
	"testing"
)

// The page Home Assistant links to is one a person can follow.
func TestReachablePage(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct{ page, want string }{
		{"", ""},
		{"http://127.0.0.1:8642/", "http://127.0.0.1:8642/"},
		{"http://kitchenpi.lan:8642/", "http://kitchenpi.lan:8642/"},
		{"http://0.0.0.0:8642/", "http://" + strings.ToLower(host) + ".local:8642/"},
		{"http://[::]:8642/", "http://" + strings.ToLower(host) + ".local:8642/"},
	} {
		if got := reachable(tc.page); got != tc.want {
			t.Errorf("reachable(%q) = %q, want %q", tc.page, got, tc.want)
		}
	}
}
