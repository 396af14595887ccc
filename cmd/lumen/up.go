package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/render"
)

func newUp(a *app) *cobra.Command {
	cfg := daemon.DefaultConfig(daemon.DataDir())
	var configFile string
	var groupFlags []string
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run the Lumen daemon: embedded NATS + JetStream, and the lights",
		Long: `Run the Lumen daemon. It embeds a NATS server with JetStream on disk under
--data, starts each --light as a supervised actor and serves the 'lumen' NATS
micro service. A light with no configuration yet gets the demo one: a click
cycles red, green and blue, a hold turns it off.

When ready it prints one line 'lumen: ready nats://HOST:PORT'.

Settings come from <data>/lumen.yaml (or --config), flags win:
  listen: 127.0.0.1:4222
  lights: [demo]
  sync: always          # or batch
  user: …               # credentials, required to listen beyond loopback
  password: …
  max_bytes: 1073741824 # journal size budget
  clock: auto           # auto | trust | wait
  groups: {downstairs: [kitchen, hall]}
  http: 127.0.0.1:8080  # webhook sources: POST /hooks/<light>/<source> (off when absent)
  mqtt: 127.0.0.1:1883  # the embedded server's MQTT listener (off when absent)
  hardware:
    driver: auto        # auto (GPIO on a Pi, else simulated) | sim | rpi
    light: demo         # the light the Pi's LED and button belong to
    pixels: 1           # simulated strip length
    gamma: 2.2
    brightness: 1       # global cap, 0–1
    fade_ms: 0          # cross-fade between states
    gestures: {debounce_ms: 20, double_ms: 300, hold_ms: 800}
    rpi:                # BCM pin numbers; see the README for wiring
      led: {type: rgb, pins: [17, 27, 22], pwm: auto, pwm_hz: 500, active_low: false}
      button: {pin: 4, poll_ms: 1, active_high: false}

With no GPIO the light's LED and button are simulated: 'lumen press' clicks,
'nats req lumen.<light>.cmd.led {}' tells the color shown, and on a terminal
the status line shows it live. The input pins of gpio sources are simulated
too: 'lumen gpio PIN high|low|pulse' drives one.`,
		Example: `  lumen up
  lumen up --light kitchen --light hall --listen 127.0.0.1:0
  lumen up --data /var/lib/lumen --sync batch
  lumen up --http 127.0.0.1:8080 --mqtt 127.0.0.1:1883`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			groups, err := daemon.ParseGroups(groupFlags)
			if err != nil {
				return usageError{err}
			}
			cfg.Groups = groups
			final, err := loadUpConfig(cmd, cfg, configFile)
			if err != nil {
				return err
			}
			return a.runDaemon(cmd.Context(), final)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", cfg.Data, "data directory (journal, snapshots, lumen.yaml)")
	f.StringVar(&cfg.Listen, "listen", cfg.Listen, "NATS listen address for outside clients (HOST:0 picks a free port)")
	f.StringArrayVar(&cfg.Lights, "light", cfg.Lights, "a light to run (repeat for several)")
	f.StringVar(&cfg.Sync, "sync", cfg.Sync, "always: fsync every event before acknowledging it; batch: faster, may lose the last events on power loss")
	f.StringVar(&configFile, "config", "", "configuration file (default <data>/lumen.yaml)")
	f.StringVar(&cfg.User, "user", "", "user name outside clients must give")
	f.StringVar(&cfg.Password, "password", "", "password outside clients must give")
	f.StringArrayVar(&groupFlags, "group", nil, "GROUP=LIGHT,LIGHT…: lights that also answer lumen.group.GROUP.cmd.<verb> (repeatable)")
	f.StringVar(&cfg.ClockMode, "clock", cfg.ClockMode, "auto: trust the clock unless this is a Pi without time sync; trust; wait: timers wait for time sync")
	f.IntVar(&cfg.SnapshotEvery, "snapshot-every", cfg.SnapshotEvery, "inputs between snapshots of a light")
	f.Int64Var(&cfg.MaxBytes, "max-bytes", cfg.MaxBytes, "journal size budget: past 3/4 of it, events covered by snapshots are purged")
	f.StringVar(&cfg.HTTP, "http", "", "HOST:PORT of the HTTP port for webhook sources (POST /hooks/LIGHT/SOURCE); off by default; beyond loopback needs --user/--password")
	f.StringVar(&cfg.MQTT, "mqtt", "", "HOST:PORT of the embedded server's MQTT listener (topic home/doorbell is subject home.doorbell); off by default; beyond loopback needs --user/--password")
	f.StringArrayVar(&cfg.AllowNet, "allow-net", nil, "HOST[:PORT], IP or CIDR custom tools may reach even on the LAN, and over plain HTTP (repeatable); tools can never grant this themselves")
	agentFlags(f, &cfg.Agent)
	f.StringVar(&cfg.Hardware.Driver, "hardware", cfg.Hardware.Driver, "auto: the Pi's GPIO when present, else a simulated LED and button; sim; rpi")
	return cmd
}

// loadUpConfig reads the configuration file under the flags that were
// given.
func loadUpConfig(cmd *cobra.Command, flags daemon.Config, file string) (daemon.Config, error) {
	explicit := file != ""
	if file == "" {
		file = filepath.Join(flags.Data, "lumen.yaml")
	}
	cfg := flags
	b, err := os.ReadFile(file)
	switch {
	case errors.Is(err, os.ErrNotExist) && !explicit:
	case err != nil:
		return cfg, fmt.Errorf("config: %w", err)
	default:
		if err := mergeFile(cmd.Flags(), &cfg, b); err != nil {
			return cfg, fmt.Errorf("config %s: %w", file, err)
		}
	}
	cfg.Agent.APIKey = os.Getenv("OPENAI_API_KEY")
	cfg.SourceMinInterval = sourceMinInterval(cmd.ErrOrStderr())
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// mergeFile decodes lumen.yaml over cfg, but for the keys whose flags
// were given: flags win.
func mergeFile(flags *pflag.FlagSet, cfg *daemon.Config, b []byte) error {
	keys := map[string]string{"listen": "listen", "light": "lights", "sync": "sync", "user": "user", "password": "password",
		"clock": "clock", "snapshot-every": "snapshot_every", "group": "groups", "max-bytes": "max_bytes", "allow-net": "allow_net",
		"http": "http", "mqtt": "mqtt", "hardware": "hardware.driver", "openai-base-url": "agent.base_url", "model": "agent.model",
		"agent-max-turns": "agent.max_turns", "agent-timeout": "agent.timeout", "agent-forbid": "agent.forbid", "agent-stream": "agent.stream",
		"transcribe-model": "agent.transcribe_model", "speech-model": "agent.speech_model", "voice": "agent.voice"}
	var given []string
	flags.Visit(func(f *pflag.Flag) {
		if key, ok := keys[f.Name]; ok {
			given = append(given, key)
		}
	})
	return cfg.Decode(b, given)
}

// runDaemon runs lumen up until ctx ends: the daemon, its ready line and
// where to reach it, the status line on a terminal.
func (a *app) runDaemon(ctx context.Context, cfg daemon.Config) error {
	status := render.NewStatus(a.stdout, cfg.Lights)
	cfg.Logf = func(format string, args ...any) { fmt.Fprintf(a.stderr, "lumen: "+format+"\n", args...) }
	cfg.OnShow = func(light, state string, raw []hardware.RGB) { status.Show(light, state, raw) }
	d, err := daemon.New(cfg)
	if err != nil {
		return usageError{err}
	}
	defer d.Close()
	if err := d.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "lumen: ready %s\n", d.URL())
	fmt.Fprintf(a.stdout, "lumen: watch it with: nats --server %s sub 'lumen.%s.evt.>'\n", d.URL(), cfg.Lights[0])
	if u := d.WebhookURL(); u != "" {
		fmt.Fprintf(a.stdout, "lumen: webhooks on %s%s\n", u, datasource.HookPath("LIGHT", "SOURCE"))
	}
	if addr := d.MQTTAddr(); addr != "" {
		fmt.Fprintf(a.stdout, "lumen: mqtt on mqtt://%s (topic home/doorbell is subject home.doorbell)\n", addr)
	}
	<-ctx.Done()
	fmt.Fprintln(a.stderr, "lumen: shutting down")
	return d.Close()
}

// sourceMinInterval is $LUMEN_SOURCE_MIN_INTERVAL_MS, the shortest
// interval a data source may have, which exists for tests only: they
// cannot wait 10 s per fetch. 0 keeps the daemon's minimum.
func sourceMinInterval(stderr io.Writer) time.Duration {
	v := os.Getenv("LUMEN_SOURCE_MIN_INTERVAL_MS")
	ms, err := strconv.Atoi(v)
	if v != "" && (err != nil || ms <= 0) {
		fmt.Fprintf(stderr, "lumen: LUMEN_SOURCE_MIN_INTERVAL_MS=%q is not a positive number of milliseconds; ignored\n", v)
	}
	return time.Duration(max(ms, 0)) * time.Millisecond
}
