package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/internal/memtrim"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/web"
)

func newUp(a *app) *cobra.Command {
	cfg := daemon.DefaultConfig(daemon.DataDir())
	var configFile string
	var groupFlags []string
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run the Lumen daemon: embedded NATS + JetStream, and the lights",
		Long: `Run the Lumen daemon. It keeps the journal of every light under --data (an
embedded NATS server with JetStream), runs each --light (restarted if it
crashes) and answers the requests of the other lumen commands and of the nats
CLI. A light with no configuration yet gets the demo one: a click cycles red,
green and blue, a hold turns it off.

When ready it prints 'lumen: ready nats://HOST:PORT' (the port it got when
--listen asked for port 0), then how to watch the light.

Settings come from lumen.yaml in the --data directory (or --config FILE);
flags win over it. Its keys, with their defaults (or examples, for those off
by default):
  listen: 127.0.0.1:4222
  lights: [demo]
  sync: always          # or batch
  user: …               # with password: the credentials outside clients give;
  password: …           #   required to listen beyond this machine
  max_bytes: 0          # journal size budget in bytes; 0: 3/4 of the free space
                        #   at the first start, at most 1 GiB, kept in budget.json
  snapshot_every: 1000
  clock: auto           # auto | trust | wait
  groups: {downstairs: [kitchen, hall]}
  allow_net: [192.168.1.20, 10.0.0.0/8:443]
  home: {lat: 48.85, lon: 2.35}   # get_weather's "auto"
  weather_units: imperial          # or metric
  weather_url: …; geocoding_url: … # default Open-Meteo's
  search_url: https://searx.example/search   # web_search (none by default)
  http: 127.0.0.1:8080  # webhook sources: POST /hooks/LIGHT/SOURCE (off when absent)
  mqtt: 127.0.0.1:1883  # MQTT clients, on the embedded NATS server (off when absent)
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
  agent: {model: …, base_url: …, max_turns: 10, timeout: 60s, forbid: [], stream: false,
          transcribe_model: whisper-1, speech_model: tts-1, voice: alloy}

With no GPIO the light's LED and button are simulated: 'lumen press' clicks,
'nats req lumen.LIGHT.cmd.led {}' tells the color shown, and on a terminal
the status line shows it live. The input pins of gpio sources are simulated
too: 'lumen gpio PIN high|low|pulse' drives one.`,
		Example: `  lumen up
  lumen up --light kitchen --light hall --listen 127.0.0.1:0
  lumen up --data /var/lib/lumen --sync batch
  lumen up --listen 0.0.0.0:4222 --config /etc/lumen.yaml   # with user: and password: in the file
  lumen up --http 127.0.0.1:8080 --mqtt 127.0.0.1:1883
  lumen up --light kitchen --light hall --hub tls://hub.local:7422 --creds kitchenpi.creds`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			groups, err := daemon.ParseGroups(groupFlags)
			if err != nil {
				return cli.UsageError{Err: err}
			}
			cfg.Groups = groups
			final, err := loadUpConfig(cmd, cfg, configFile)
			if err != nil {
				return err
			}
			return a.runDaemon(cmd.Context(), final)
		},
	}
	// A `NAME` in a usage names the flag's value in the help, instead of
	// its Go type (string, stringArray, int).
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", cfg.Data, "keep the journal, the snapshots and lumen.yaml in `DIR`")
	f.StringVar(&cfg.Listen, "listen", cfg.Listen, "accept outside NATS clients on `HOST:PORT`; HOST:0 picks a free port (the ready line prints it); a host beyond this machine needs --user and --password")
	f.StringArrayVar(&cfg.Lights, "light", cfg.Lights, "run the light `NAME` (repeat for several)")
	f.Lookup("light").DefValue = strings.Join(cfg.Lights, ",") // not [demo]
	f.StringVar(&cfg.Sync, "sync", cfg.Sync, "when events reach the disk, `always|batch`: always: each before it is acknowledged; batch: in flushes every second, faster, but a power cut loses what was acknowledged since the last one")
	f.StringVar(&configFile, "config", "", "read the settings from `FILE` (default lumen.yaml in the --data directory)")
	f.StringVar(&cfg.User, "user", "", "the user `NAME` outside clients must give, with --password (a webhook may give its source's token instead); both are required to listen beyond this machine")
	f.StringVar(&cfg.Password, "password", "", "the `PASSWORD` that goes with --user (password: in lumen.yaml keeps it out of the process list)")
	f.StringArrayVar(&groupFlags, "group", nil, "lights that also answer lumen.group.GROUP.cmd.VERB, as `GROUP=LIGHT,LIGHT` (repeatable)")
	f.StringVar(&cfg.ClockMode, "clock", cfg.ClockMode, "when timers and schedules may trust the system clock, `auto|trust|wait`: trust: at once; wait: once it is synchronized; auto: wait on a Pi without a battery-backed clock, else trust")
	f.IntVar(&cfg.SnapshotEvery, "snapshot-every", cfg.SnapshotEvery, "snapshot a light every `N` inputs")
	f.Int64Var(&cfg.MaxBytes, "max-bytes", cfg.MaxBytes, "journal size budget in `BYTES`, snapshots and MQTT sessions included; 0: 3/4 of the disk's free space at the first start, at most 1 GiB, kept in budget.json in --data (start-up says which). Past 3/4 of the journal's share, each light purges the events its snapshots cover (on a Pi of a house, only those the hub has copied, until 15/16: then a gap event says what the house will never have); a full journal, or a disk with less than 8 MiB free, refuses changes with 507")
	f.StringVar(&cfg.HTTP, "http", cfg.HTTP, "serve the page, the API (/api/v1) and webhook sources (POST /hooks/LIGHT/SOURCE) on `HOST:PORT`; off: none; HOST:0 picks a free port; a host beyond this machine needs --user and --password")
	f.Lookup("http").DefValue = web.DefaultAddr + ", or none if that port is taken"
	f.StringArrayVar(&cfg.HTTPNames, "http-name", nil, "another host `NAME` the page is reached by (e.g. kitchenpi.lan), besides IP addresses, localhost and this machine's names; other names are refused against DNS rebinding (repeatable)")
	f.StringVar(&cfg.MQTT, "mqtt", "", "accept MQTT 3.1.1 clients on `HOST:PORT` (topic home/doorbell is NATS subject home.doorbell); off when not given; HOST:0 picks a free port; a host beyond this machine needs --user and --password")
	f.StringArrayVar(&cfg.AllowNet, "allow-net", nil, "let custom tools reach `HOST`, an IP or a CIDR (each with an optional :PORT) even on the LAN, and over plain HTTP (repeatable); a tool can never grant this itself")
	f.StringVar(&cfg.Hub, "hub", "", "join a house: the hub's leaf address `URL`, e.g. tls://hub.local:7422 (with --creds); the lights keep working alone while the hub is away")
	f.StringVar(&cfg.Creds, "creds", "", "the Pi's credentials `FILE`, written on the hub by 'lumen hub pi add NAME --light …'")
	f.StringVar(&cfg.Agent.Model, "model", os.Getenv("LUMEN_MODEL"), "the agent's model, e.g. gpt-4o-mini or llama3.1 (default $LUMEN_MODEL; none: the agent is off)")
	agentFlags(f, &cfg.Agent)
	f.Var(homeFlag{&cfg.Home}, "home", "where the built-in get_weather's location \"auto\" is, as `LAT,LON`, e.g. 48.85,2.35")
	f.StringVar(&cfg.WeatherURL, "weather-url", "", "get_weather's forecast endpoint `URL` (default Open-Meteo's, "+tool.DefaultWeatherURL+")")
	f.StringVar(&cfg.GeocodingURL, "geocoding-url", "", "get_weather's geocoding endpoint `URL` (default Open-Meteo's, "+tool.DefaultGeocodingURL+")")
	f.StringVar(&cfg.WeatherUnits, "weather-units", "", "get_weather's temp, high and low in `imperial|metric` (default imperial: °F)")
	f.StringVar(&cfg.SearchURL, "search-url", "", "the built-in web_search's endpoint `URL`, a search API answering ?q=…&format=json as SearXNG does (none by default)")
	f.StringVar(&cfg.Hardware.Driver, "hardware", cfg.Hardware.Driver, "the LED and button, `auto|sim|rpi`: auto: the Pi's GPIO when there is one, else simulated; sim: simulated; rpi: the Pi's GPIO")
	return cmd
}

// homeFlag is --home LAT,LON.
type homeFlag struct{ h **tool.Home }

func (f homeFlag) String() string {
	if f.h == nil || *f.h == nil {
		return ""
	}
	return fmt.Sprintf("%g,%g", (*f.h).Lat, (*f.h).Lon)
}

func (f homeFlag) Set(s string) error {
	lat, lon, ok := strings.Cut(s, ",")
	la, err1 := strconv.ParseFloat(strings.TrimSpace(lat), 64)
	lo, err2 := strconv.ParseFloat(strings.TrimSpace(lon), 64)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("give LAT,LON in degrees, e.g. 48.85,2.35")
	}
	*f.h = &tool.Home{Lat: la, Lon: lo}
	return nil
}

func (homeFlag) Type() string { return "LAT,LON" }

// loadUpConfig reads the configuration file under the flags that were
// given.
func loadUpConfig(cmd *cobra.Command, flags daemon.Config, file string) (daemon.Config, error) {
	keys := daemon.FlagKeys()
	var given []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if key, ok := keys[f.Name]; ok {
			given = append(given, key)
		}
	})
	cfg, err := daemon.LoadConfig(file, flags, given)
	if err != nil {
		return cfg, err
	}
	cfg.Agent.APIKey = os.Getenv("OPENAI_API_KEY")
	cfg.SourceMinInterval = sourceMinInterval(cmd.ErrOrStderr())
	if err := cfg.Validate(); errors.Is(err, daemon.ErrCreds) {
		return cfg, err // the creds, not how the command was called
	} else if err != nil {
		return cfg, cli.UsageError{Err: err}
	}
	return cfg, nil
}

// runDaemon runs lumen up until ctx ends: the daemon, its ready line and
// where to reach it, the status line on a terminal.
func (a *app) runDaemon(ctx context.Context, cfg daemon.Config) error {
	status := render.NewStatus(a.Stdout, cfg.Lights)
	cfg.Logf = logTo(a.Stderr)
	cfg.OnShow = func(light, state string, raw []hardware.RGB) { status.Show(light, state, raw) }
	if a.self != "" {
		cfg.CompileGuest = compileGuestApart(a.self, cfg.Logf)
	}
	d, err := daemon.New(cfg)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	defer d.Close()
	if err := d.Run(ctx); err != nil {
		return startError(err, cfg)
	}
	fmt.Fprintf(a.Stdout, "lumen: ready %s\n", d.URL())
	fmt.Fprintf(a.Stdout, "lumen: watch it with: nats --server %s sub 'lumen.%s.evt.>'\n", d.URL(), cfg.Lights[0])
	if u := d.WebhookURL(); u != "" {
		fmt.Fprintf(a.Stdout, "lumen: page %s/\n", u)
		fmt.Fprintf(a.Stdout, "lumen: webhooks on %s%s\n", u, datasource.HookPath("LIGHT", "SOURCE"))
	}
	if addr := d.MQTTAddr(); addr != "" {
		fmt.Fprintf(a.Stdout, "lumen: mqtt on mqtt://%s (topic home/doorbell is subject home.doorbell)\n", addr)
	}
	go func() {
		select {
		case <-d.Warmed():
		case <-ctx.Done():
			return
		}
		if _, err := memtrim.Release(); err != nil {
			cfg.Logf("%v", err)
		}
	}()
	<-ctx.Done()
	fmt.Fprintln(a.Stderr, "lumen: shutting down")
	return d.Close()
}

// compileGuestApart compiles the tools' guest with this binary's hidden
// 'lumen tool precompile', in a child process, so that the compiler's
// memory leaves with it. The child dies with lumen: a killed daemon must
// not leave a compiler running.
func compileGuestApart(lumen string, logf func(string, ...any)) func(ctx context.Context, wasm, out string) error {
	return func(ctx context.Context, wasm, out string) error {
		cmd := exec.CommandContext(ctx, lumen, "tool", "precompile", "--wasm", wasm, "-o", out)
		if b, err := runTied(cmd); err != nil {
			if ctx.Err() != nil {
				return err // lumen is stopping
			}
			logf("tools: compiling in a child process failed (%v: %s); compiling in this process", err, strings.TrimSpace(string(b)))
			return err
		}
		return nil
	}
}

// startError turns a start that failed on a data dir or a port in use
// into which flag gave it and what to do. The daemon's own errors start
// with the flag (--http: …); the broker's say which of its listeners
// failed. Any other error is returned as it is.
func startError(err error, cfg daemon.Config) error {
	if errors.Is(err, broker.ErrDirInUse) {
		return fmt.Errorf("--data %s is in use by another lumen (lumen up, or lumen replay --data): stop it, or give this one another --data", cfg.Data)
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	flag, addr := "--listen", cfg.Listen
	switch msg := err.Error(); {
	case strings.HasPrefix(msg, "--http:"):
		flag, addr = "--http", cfg.HTTP
	case strings.Contains(msg, "MQTT"):
		flag, addr = "--mqtt", cfg.MQTT
	}
	host, _, _ := net.SplitHostPort(addr)
	return fmt.Errorf("%s %s: the port is taken (%w), by another lumen up or another program: stop it, or give this one another port; %s picks a free one, which lumen up prints once ready",
		flag, addr, syscall.EADDRINUSE, net.JoinHostPort(host, "0"))
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
