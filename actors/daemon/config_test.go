package daemon_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/nats/broker"
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
		{name: "LAN http without credentials", cfg: daemon.Config{HTTP: "0.0.0.0:8080"}, err: `--http 0.0.0.0:8080 would let other machines in without credentials: set --user and --password (user: and password: in lumen.yaml), or use 127.0.0.1:8080`},
		{name: "LAN http with a user only", cfg: daemon.Config{User: "ann", HTTP: ":8080"}, err: "--user is given but --password is not"},
		{name: "LAN mqtt without credentials", cfg: daemon.Config{MQTT: "pi.local:1883"}, err: `--mqtt pi.local:1883 would let other machines in without credentials: set --user and --password`},
		{name: "not host:port", cfg: daemon.Config{HTTP: "8080"}, err: `--http "8080" is not HOST:PORT with a port from 0 to 65535: write e.g. 127.0.0.1:8080, or HOST:0 for a free port`},
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

// Validate's errors are what lumen up prints: they name the flag (and
// the lumen.yaml key where the credentials go), never a Go field, and
// come before the broker, whose own checks speak of its Config.
func TestValidateNamesFlags(t *testing.T) {
	tests := []struct {
		name  string
		given func(*daemon.Config)
		want  string // the whole error
	}{
		{"listen beyond loopback", func(c *daemon.Config) { c.Listen = "0.0.0.0:4222" },
			"--listen 0.0.0.0:4222 would let other machines in without credentials: set --user and --password (user: and password: in lumen.yaml), or use 127.0.0.1:4222 to accept this machine only"},
		{"listen on every interface", func(c *daemon.Config) { c.Listen = ":4222" },
			"--listen :4222 would let other machines in without credentials: set --user and --password (user: and password: in lumen.yaml), or use 127.0.0.1:4222 to accept this machine only"},
		{"listen not host:port", func(c *daemon.Config) { c.Listen = "4222" },
			`--listen "4222" is not HOST:PORT with a port from 0 to 65535: write e.g. 127.0.0.1:4222, or HOST:0 for a free port`},
		{"listen port too big", func(c *daemon.Config) { c.Listen = "127.0.0.1:70000" },
			`--listen "127.0.0.1:70000" is not HOST:PORT with a port from 0 to 65535: write e.g. 127.0.0.1:4222, or HOST:0 for a free port`},
		{"mqtt beyond loopback", func(c *daemon.Config) { c.MQTT = "0.0.0.0:1883" },
			"--mqtt 0.0.0.0:1883 would let other machines in without credentials: set --user and --password (user: and password: in lumen.yaml), or use 127.0.0.1:1883 to accept this machine only"},
		{"user without password", func(c *daemon.Config) { c.User = "ann" },
			"--user is given but --password is not: give both (user: and password: in lumen.yaml), or neither"},
		{"password without user", func(c *daemon.Config) { c.Password = "pw" },
			"--password is given but --user is not: give both (user: and password: in lumen.yaml), or neither"},
		{"the daemon's user", func(c *daemon.Config) { c.User, c.Password = broker.DaemonUser, "pw" },
			`--user "lumen-daemon" is a name Lumen keeps for its own connections: pick another`},
		{"the anonymous client's user", func(c *daemon.Config) { c.User, c.Password = "lumen-client", "pw" },
			`--user "lumen-client" is a name Lumen keeps for its own connections: pick another`},
		{"negative max bytes", func(c *daemon.Config) { c.MaxBytes = -5 },
			"--max-bytes -5 is negative: give the journal's size budget in bytes (max_bytes: in lumen.yaml), or 0 to choose it from the free space (at most 1073741824, 1 GiB)"},
		{"tiny max bytes", func(c *daemon.Config) { c.MaxBytes = 1000 },
			"--max-bytes 1000 is too small: the journal needs at least 65536 bytes (max_bytes: in lumen.yaml), or 0 to choose it from the free space"},
		{"negative snapshot interval", func(c *daemon.Config) { c.SnapshotEvery = -1 },
			"--snapshot-every -1 is negative: give how many inputs a light takes between snapshots (snapshot_every: in lumen.yaml), or 0 for the default, 1000"},
		{"no data directory", func(c *daemon.Config) { c.Data = "" },
			"--data is empty: give the directory of the journal, the snapshots and lumen.yaml"},
		{"credentials open the network", func(c *daemon.Config) {
			c.Listen, c.HTTP, c.MQTT, c.User, c.Password = "0.0.0.0:4222", "0.0.0.0:8080", "[::]:1883", "ann", "pw"
		}, ""},
		{"zero keeps the defaults", func(c *daemon.Config) { c.MaxBytes, c.SnapshotEvery = 0, 0 }, ""},
		{"home off the globe", func(c *daemon.Config) { c.Home = &tool.Home{Lat: 95, Lon: 2} },
			"--home 95,2: give a latitude from -90 to 90 and a longitude from -180 to 180, e.g. --home 48.85,2.35 (home: {lat: 48.85, lon: 2.35} in lumen.yaml)"},
		{"weather units", func(c *daemon.Config) { c.WeatherUnits = "kelvin" }, `--weather-units must be imperial or metric, not "kelvin"`},
		{"search url", func(c *daemon.Config) { c.SearchURL = "searx.local" },
			`--search-url "searx.local": give an http(s) URL, e.g. https://searx.example/search`},
		{"weather settings", func(c *daemon.Config) {
			c.Home, c.WeatherUnits, c.WeatherURL, c.SearchURL = &tool.Home{Lat: -33.9, Lon: 151.2}, "metric", "http://127.0.0.1:9/v1/forecast", "https://searx.example/search"
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := daemon.DefaultConfig(t.TempDir())
			tt.given(&cfg)
			err := cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("err %v\nwant %s", err, tt.want)
			}
		})
	}
}

// A start on a port that is taken fails at once with an error that is
// syscall.EADDRINUSE and names the address, for each of the daemon's
// listeners: lumen up turns it into which flag to change.
func TestRunPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	tests := []struct {
		name  string
		given func(*daemon.Config)
		want  string // in the error
	}{
		{"--listen", func(c *daemon.Config) { c.Listen = addr }, "broker: cannot listen for clients on " + addr + ": address already in use"},
		{"--mqtt", func(c *daemon.Config) { c.MQTT = addr }, "broker: cannot listen for MQTT clients on " + addr + ": address already in use"},
		{"--http", func(c *daemon.Config) { c.HTTP = addr }, "--http: listen tcp " + addr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := daemon.DefaultConfig(t.TempDir())
			cfg.Listen, cfg.Sync, cfg.ClockMode, cfg.Hardware.Driver = "127.0.0.1:0", broker.SyncBatch, "trust", "sim"
			cfg.Logf = testLog(t)
			tt.given(&cfg)
			d, err := daemon.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err = d.Run(ctx)
			if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run() = %v, want syscall.EADDRINUSE and %q", err, tt.want)
			}
		})
	}
}
