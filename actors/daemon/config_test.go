package daemon_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/daemon"
)

// --http and --mqtt follow --listen's rule: beyond loopback only with
// credentials.
func TestCheckListeners(t *testing.T) {
	tests := []struct {
		name string
		cfg  daemon.Config
		err  string // in the error, "" for none
	}{
		{name: "off", cfg: daemon.Config{}},
		{name: "loopback", cfg: daemon.Config{HTTP: "127.0.0.1:0", MQTT: "localhost:1883"}},
		{name: "loopback v6", cfg: daemon.Config{HTTP: "[::1]:8080"}},
		{name: "LAN with credentials", cfg: daemon.Config{User: "ann", Password: "pw", HTTP: "0.0.0.0:8080", MQTT: "[::]:1883"}},
		{name: "LAN http without credentials", cfg: daemon.Config{HTTP: "0.0.0.0:8080"}, err: `--http: broker: refusing to listen for HTTP on "0.0.0.0:8080" without credentials`},
		{name: "LAN http with a user only", cfg: daemon.Config{User: "ann", HTTP: ":8080"}, err: "without credentials"},
		{name: "LAN mqtt without credentials", cfg: daemon.Config{MQTT: "pi.local:1883"}, err: `--mqtt: broker: refusing to listen for MQTT on "pi.local:1883" without credentials`},
		{name: "not host:port", cfg: daemon.Config{HTTP: "8080"}, err: `--http: broker: HTTP address "8080" is not host:port`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := daemon.DefaultConfig(t.TempDir())
			cfg.User, cfg.Password, cfg.HTTP, cfg.MQTT = tt.cfg.User, tt.cfg.Password, tt.cfg.HTTP, tt.cfg.MQTT
			err := cfg.Validate()
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err %v, want %q", err, tt.err)
			}
		})
	}
}
