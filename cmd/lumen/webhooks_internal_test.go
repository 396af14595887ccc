package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --http and --mqtt follow --listen's rule: beyond loopback only with
// credentials.
func TestCheckListeners(t *testing.T) {
	tests := []struct {
		name string
		cfg  UpConfig
		err  string // in the error, "" for none
	}{
		{name: "off", cfg: UpConfig{}},
		{name: "loopback", cfg: UpConfig{HTTP: "127.0.0.1:0", MQTT: "localhost:1883"}},
		{name: "loopback v6", cfg: UpConfig{HTTP: "[::1]:8080"}},
		{name: "LAN with credentials", cfg: UpConfig{User: "ann", Password: "pw", HTTP: "0.0.0.0:8080", MQTT: "[::]:1883"}},
		{name: "LAN http without credentials", cfg: UpConfig{HTTP: "0.0.0.0:8080"}, err: `--http: broker: refusing to listen for HTTP on "0.0.0.0:8080" without credentials`},
		{name: "LAN http with a user only", cfg: UpConfig{User: "ann", HTTP: ":8080"}, err: "without credentials"},
		{name: "LAN mqtt without credentials", cfg: UpConfig{MQTT: "pi.local:1883"}, err: `--mqtt: broker: refusing to listen for MQTT on "pi.local:1883" without credentials`},
		{name: "not host:port", cfg: UpConfig{HTTP: "8080"}, err: `--http: broker: HTTP address "8080" is not host:port`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.checkListeners()
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

// lumen up reads http: and mqtt: from lumen.yaml too, and refuses a
// listener beyond loopback without credentials before starting anything
// (exit 2).
func TestUpRefusesOpenListeners(t *testing.T) {
	tests := []struct {
		name, yaml string
		args       []string
		want       string
	}{
		{"--http flag", "", []string{"--http", "0.0.0.0:0"}, "--http: broker: refusing to listen for HTTP"},
		{"http: in lumen.yaml", "http: 0.0.0.0:0\n", nil, "--http: broker: refusing to listen for HTTP"},
		{"mqtt: in lumen.yaml", "mqtt: 0.0.0.0:0\n", nil, "--mqtt: broker: refusing to listen for MQTT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.yaml != "" {
				if err := os.WriteFile(filepath.Join(dir, "lumen.yaml"), []byte(tt.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var out, errOut bytes.Buffer
			code := run(context.Background(), append([]string{"up", "--data", dir, "--listen", "127.0.0.1:0"}, tt.args...), strings.NewReader(""), &out, &errOut)
			if code != 2 || !strings.Contains(errOut.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q, want 2 and %q", code, errOut.String(), tt.want)
			}
		})
	}
}
