package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
