package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/agent"
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

// lumen.yaml gives every setting a flag does not: a flag given on the
// command line wins over its key, also inside a section.
func TestConfigFileUnderFlags(t *testing.T) {
	cfg := daemon.DefaultConfig(t.TempDir())
	fs := pflag.NewFlagSet("up", pflag.ContinueOnError)
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "")
	fs.StringArrayVar(&cfg.Lights, "light", cfg.Lights, "")
	fs.StringVar(&cfg.Hardware.Driver, "hardware", cfg.Hardware.Driver, "")
	fs.StringVar(&cfg.Agent.Model, "model", "", "")
	if err := fs.Parse([]string{"--listen", "127.0.0.1:0", "--hardware", "sim"}); err != nil {
		t.Fatal(err)
	}
	file := `listen: 0.0.0.0:4222
lights: [kitchen, hall]
snapshot_every: 50
hardware: {driver: rpi, pixels: 8, gestures: {hold_ms: 900}}
agent: {model: llama3.1, max_turns: 4}
`
	if err := mergeFile(fs, &cfg, []byte(file)); err != nil {
		t.Fatal(err)
	}
	switch {
	case cfg.Listen != "127.0.0.1:0" || cfg.Hardware.Driver != "sim":
		t.Errorf("a flag lost to the file: listen %s, hardware %s", cfg.Listen, cfg.Hardware.Driver)
	case !slices.Equal(cfg.Lights, []string{"kitchen", "hall"}) || cfg.SnapshotEvery != 50 || cfg.Hardware.Pixels != 8 || cfg.Hardware.Gestures.HoldMs != 900:
		t.Errorf("the file's keys: %+v", cfg)
	case cfg.Agent.Model != "llama3.1" || cfg.Agent.MaxTurns != 4 || cfg.Agent.Timeout != agent.DefaultCallTimeout:
		t.Errorf("agent %+v", cfg.Agent)
	}
	if err := mergeFile(fs, &cfg, []byte("lisen: 1\n")); err == nil || !strings.Contains(err.Error(), "lisen") {
		t.Errorf("an unknown key: %v", err)
	}
	if err := mergeFile(fs, &cfg, nil); err != nil {
		t.Errorf("an empty file: %v", err)
	}
}
