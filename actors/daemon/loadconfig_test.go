package daemon_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/agent"
)

// lumen.yaml gives every setting a flag does not: a flag given on the
// command line wins over its key, also inside a section.
func TestLoadConfigUnderFlags(t *testing.T) {
	dir := t.TempDir()
	flags := daemon.DefaultConfig(dir)
	flags.Listen, flags.Hardware.Driver = "127.0.0.1:0", "sim"
	flags.HA.User = "from-the-flag"
	given := []string{daemon.FlagKeys()["listen"], daemon.FlagKeys()["hardware"], daemon.FlagKeys()["ha-user"]}
	file := `listen: 0.0.0.0:4222
lights: [kitchen, hall]
snapshot_every: 50
hardware: {driver: rpi, pixels: 8, gestures: {hold_ms: 900}}
agent: {model: llama3.1, max_turns: 4}
home: {lat: 48.85, lon: 2.35}
weather_units: metric
search_url: https://searx.example/search
ha_mqtt: {url: "mqtt://ha.lan:1883", user: lumen, password: secret}
`
	if err := os.WriteFile(filepath.Join(dir, "lumen.yaml"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := daemon.LoadConfig("", flags, given)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case cfg.Listen != "127.0.0.1:0" || cfg.Hardware.Driver != "sim":
		t.Errorf("a flag lost to the file: listen %s, hardware %s", cfg.Listen, cfg.Hardware.Driver)
	case !slices.Equal(cfg.Lights, []string{"kitchen", "hall"}) || cfg.SnapshotEvery != 50 || cfg.Hardware.Pixels != 8 || cfg.Hardware.Gestures.HoldMs != 900:
		t.Errorf("the file's keys: %+v", cfg)
	case cfg.Agent.Model != "llama3.1" || cfg.Agent.MaxTurns != 4 || cfg.Agent.Timeout != agent.DefaultCallTimeout:
		t.Errorf("agent %+v", cfg.Agent)
	case cfg.Home == nil || cfg.Home.Lat != 48.85 || cfg.Home.Lon != 2.35 || cfg.WeatherUnits != "metric" || cfg.SearchURL != "https://searx.example/search":
		t.Errorf("weather and search: %+v %q %q", cfg.Home, cfg.WeatherUnits, cfg.SearchURL)
	case cfg.HA.URL != "mqtt://ha.lan:1883" || cfg.HA.Password != "secret" || cfg.HA.User != "from-the-flag":
		t.Errorf("ha_mqtt: %+v", cfg.HA)
	}
	if err := cfg.HA.Validate(); err != nil || cfg.HA.Prefix != "homeassistant" {
		t.Errorf("ha_mqtt validated: %v, prefix %q", err, cfg.HA.Prefix)
	}

	for _, tt := range []struct {
		name, file, content, err string
	}{
		{name: "an unknown key", file: "typo.yaml", content: "lisen: 1\n", err: "lisen"},
		{name: "an empty file", file: "empty.yaml", content: ""},
		{name: "a file given that is not there", file: "missing.yaml", err: "config: "},
		{name: "no lumen.yaml in the data directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = filepath.Join(t.TempDir(), tt.file)
				if tt.content != "" || tt.err == "" {
					if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			_, err := daemon.LoadConfig(path, daemon.DefaultConfig(t.TempDir()), nil)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v, want one with %q", err, tt.err)
			}
		})
	}
}
