package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/internal/cli"
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
			cfg.Version = version
			return a.Up(cmd.Context(), cmd, cfg, configFile, groupFlags)
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
	f.Var(cli.HomeFlag{H: &cfg.Home}, "home", "the home's place, as `LAT,LON`, e.g. 48.85,2.35: where sun schedules are and get_weather's location \"auto\" is")
	f.StringVar(&cfg.WeatherURL, "weather-url", "", "get_weather's forecast endpoint `URL` (default Open-Meteo's, "+tool.DefaultWeatherURL+")")
	f.StringVar(&cfg.GeocodingURL, "geocoding-url", "", "get_weather's geocoding endpoint `URL` (default Open-Meteo's, "+tool.DefaultGeocodingURL+")")
	f.StringVar(&cfg.WeatherUnits, "weather-units", "", "get_weather's temp, high and low in `imperial|metric` (default imperial: °F)")
	f.StringVar(&cfg.SearchURL, "search-url", "", "the built-in web_search's endpoint `URL`, a search API answering ?q=…&format=json as SearXNG does (none by default)")
	f.StringVar(&cfg.HA.URL, "ha-mqtt", "", "show the lights in Home Assistant through its MQTT broker `URL`, mqtt://HOST:1883 or mqtts://HOST:8883 (MQTT discovery; its commands are journaled by homeassistant); off when not given")
	f.StringVar(&cfg.HA.User, "ha-user", "", "the MQTT broker's user `NAME`, with --ha-password")
	f.StringVar(&cfg.HA.Password, "ha-password", os.Getenv("LUMEN_HA_PASSWORD"), "the MQTT broker's `PASSWORD` (default $LUMEN_HA_PASSWORD; it, or ha_mqtt: {password: …} in lumen.yaml, keeps it out of the process list)")
	f.StringVar(&cfg.HA.Prefix, "ha-prefix", "", "Home Assistant's discovery `PREFIX` (default homeassistant)")
	f.StringVar(&cfg.Hardware.Driver, "hardware", cfg.Hardware.Driver, "the LED and button, `auto|sim|rpi`: auto: the Pi's GPIO when there is one, else simulated; sim: simulated; rpi: the Pi's GPIO")
	return cmd
}
