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

// --ha-mqtt's mistakes are said with the flag to change.
func TestHAConfig(t *testing.T) {
	for _, tc := range []struct {
		c   HAConfig
		err string
	}{
		{HAConfig{}, ""},
		{HAConfig{URL: "mqtt://ha.lan"}, ""},
		{HAConfig{URL: "mqtts://ha.lan:8883", User: "u", Password: "p", Prefix: "ha/disc"}, ""},
		{HAConfig{URL: "http://ha.lan"}, "mqtt:// (plain) or mqtts:// (TLS)"},
		{HAConfig{URL: "ha.lan:1883"}, "--ha-mqtt"},
		{HAConfig{URL: "mqtt://u:p@ha.lan"}, "--ha-user and --ha-password"},
		{HAConfig{URL: "mqtt://ha.lan", Password: "p"}, "--ha-password is given but --ha-user is not"},
		{HAConfig{User: "u"}, "need --ha-mqtt"},
		{HAConfig{URL: "mqtt://ha.lan", Prefix: "home/#"}, "--ha-prefix"},
	} {
		err := tc.c.Validate()
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.err)
		}
	}
}
