package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/device"
	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/actors/source"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/plugins/netpolicy"
	"github.com/lumen-home/lumen/plugins/secrets"
)

// UpConfig is the daemon's configuration: <data>/lumen.yaml, then flags.
type UpConfig struct {
	Data          string   `yaml:"-"`
	Listen        string   `yaml:"listen"`
	Lights        []string `yaml:"lights"`
	Sync          string   `yaml:"sync"`
	User          string   `yaml:"user"`
	Password      string   `yaml:"password"`
	MaxBytes      int64    `yaml:"max_bytes"`
	SnapshotEvery int      `yaml:"snapshot_every"`
	Clock         string   `yaml:"clock"`
	// Groups maps a group name to its lights, for lumen.group.<g>.cmd.<verb>.
	Groups map[string][]string `yaml:"groups"`
	// Hardware configures the LED and button (or their simulators).
	Hardware HardwareConfig `yaml:"hardware"`
	// AllowNet lets tools reach these hosts, IPs or CIDRs (with an
	// optional port) even when private, and over plain HTTP.
	AllowNet []string `yaml:"allow_net"`
	// Agent configures the LLM agent (see AgentConfig).
	Agent AgentConfig `yaml:"agent"`
	// HTTP is the daemon's HTTP port for webhook sources, MQTT the
	// embedded server's MQTT listener; both off when empty.
	HTTP string `yaml:"http"`
	MQTT string `yaml:"mqtt"`
}

func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "lumen")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "lumen")
	}
	return "lumen-data"
}

func newUp(a *app) *cobra.Command {
	var cfg UpConfig
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
			groups, err := parseGroups(groupFlags)
			if err != nil {
				return err
			}
			cfg.Groups = groups
			final, err := loadUpConfig(cmd, cfg, configFile)
			if err != nil {
				return err
			}
			m := &Main{Config: final, Stdout: a.stdout, Stderr: a.stderr}
			if err := m.Run(cmd.Context()); err != nil {
				m.Close()
				return err
			}
			<-cmd.Context().Done()
			fmt.Fprintln(a.stderr, "lumen: shutting down")
			return m.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", defaultDataDir(), "data directory (journal, snapshots, lumen.yaml)")
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:4222", "NATS listen address for outside clients (HOST:0 picks a free port)")
	f.StringArrayVar(&cfg.Lights, "light", []string{"demo"}, "a light to run (repeat for several)")
	f.StringVar(&cfg.Sync, "sync", "always", "always: fsync every event before acknowledging it; batch: faster, may lose the last events on power loss")
	f.StringVar(&configFile, "config", "", "configuration file (default <data>/lumen.yaml)")
	f.StringVar(&cfg.User, "user", "", "user name outside clients must give")
	f.StringVar(&cfg.Password, "password", "", "password outside clients must give")
	f.StringArrayVar(&groupFlags, "group", nil, "GROUP=LIGHT,LIGHT…: lights that also answer lumen.group.GROUP.cmd.<verb> (repeatable)")
	f.StringVar(&cfg.Clock, "clock", "auto", "auto: trust the clock unless this is a Pi without time sync; trust; wait: timers wait for time sync")
	f.IntVar(&cfg.SnapshotEvery, "snapshot-every", 1000, "inputs between snapshots of a light")
	f.Int64Var(&cfg.MaxBytes, "max-bytes", broker.DefaultMaxBytes, "journal size budget: past 3/4 of it, events covered by snapshots are purged")
	f.StringVar(&cfg.HTTP, "http", "", "HOST:PORT of the HTTP port for webhook sources (POST /hooks/LIGHT/SOURCE); off by default; beyond loopback needs --user/--password")
	f.StringVar(&cfg.MQTT, "mqtt", "", "HOST:PORT of the embedded server's MQTT listener (topic home/doorbell is subject home.doorbell); off by default; beyond loopback needs --user/--password")
	f.StringArrayVar(&cfg.AllowNet, "allow-net", nil, "HOST[:PORT], IP or CIDR custom tools may reach even on the LAN, and over plain HTTP (repeatable); tools can never grant this themselves")
	agentFlags(f, &cfg.Agent)
	f.StringVar(&cfg.Hardware.Driver, "hardware", "auto", "auto: the Pi's GPIO when present, else a simulated LED and button; sim; rpi")
	return cmd
}

// loadUpConfig merges the configuration file under the flags that were
// set explicitly.
func loadUpConfig(cmd *cobra.Command, flags UpConfig, file string) (UpConfig, error) {
	explicit := file != ""
	if file == "" {
		file = filepath.Join(flags.Data, "lumen.yaml")
	}
	cfg := flags
	b, err := os.ReadFile(file)
	switch {
	case err == nil:
		var fromFile UpConfig
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(&fromFile); err != nil && !errors.Is(err, io.EOF) {
			return cfg, fmt.Errorf("config %s: %w", file, err)
		}
		set := func(name string) bool { return cmd.Flags().Changed(name) }
		if !set("listen") && fromFile.Listen != "" {
			cfg.Listen = fromFile.Listen
		}
		if !set("light") && len(fromFile.Lights) > 0 {
			cfg.Lights = fromFile.Lights
		}
		if !set("sync") && fromFile.Sync != "" {
			cfg.Sync = fromFile.Sync
		}
		if !set("user") && fromFile.User != "" {
			cfg.User = fromFile.User
		}
		if !set("password") && fromFile.Password != "" {
			cfg.Password = fromFile.Password
		}
		if !set("clock") && fromFile.Clock != "" {
			cfg.Clock = fromFile.Clock
		}
		if !set("snapshot-every") && fromFile.SnapshotEvery > 0 {
			cfg.SnapshotEvery = fromFile.SnapshotEvery
		}
		if !set("group") && len(fromFile.Groups) > 0 {
			cfg.Groups = fromFile.Groups
		}
		if !set("max-bytes") && fromFile.MaxBytes > 0 {
			cfg.MaxBytes = fromFile.MaxBytes
		}
		if !set("allow-net") && len(fromFile.AllowNet) > 0 {
			cfg.AllowNet = fromFile.AllowNet
		}
		if !set("http") && fromFile.HTTP != "" {
			cfg.HTTP = fromFile.HTTP
		}
		if !set("mqtt") && fromFile.MQTT != "" {
			cfg.MQTT = fromFile.MQTT
		}
		mergeAgent(set, &cfg.Agent, fromFile.Agent)
		driver := cfg.Hardware.Driver
		cfg.Hardware = fromFile.Hardware
		if set("hardware") || cfg.Hardware.Driver == "" {
			cfg.Hardware.Driver = driver
		}
	case errors.Is(err, os.ErrNotExist) && !explicit:
	default:
		return cfg, fmt.Errorf("config: %w", err)
	}
	seen := map[string]bool{}
	for _, l := range cfg.Lights {
		if err := subject.ValidLight(l); err != nil {
			return cfg, usageError{fmt.Errorf("--light %q: %w", l, err)}
		}
		if seen[l] {
			return cfg, usageError{fmt.Errorf("--light %q is given twice", l)}
		}
		seen[l] = true
	}
	if cfg.Sync != "always" && cfg.Sync != "batch" {
		return cfg, usageError{fmt.Errorf("--sync must be always or batch, not %q", cfg.Sync)}
	}
	for g, members := range cfg.Groups {
		if err := subject.ValidGroup(g); err != nil {
			return cfg, usageError{fmt.Errorf("group %q: %w", g, err)}
		}
		for _, l := range members {
			if !seen[l] {
				return cfg, usageError{fmt.Errorf("group %q names light %q, which is not one of --light %s", g, l, strings.Join(cfg.Lights, ", "))}
			}
		}
	}
	switch cfg.Clock {
	case "auto", "trust", "wait":
	default:
		return cfg, usageError{fmt.Errorf("--clock must be auto, trust or wait, not %q", cfg.Clock)}
	}
	if err := cfg.Hardware.validate(cfg.Lights); err != nil {
		return cfg, usageError{err}
	}
	if err := cfg.checkListeners(); err != nil {
		return cfg, usageError{err}
	}
	if _, err := netpolicy.ParseAllow(cfg.AllowNet); err != nil {
		return cfg, usageError{fmt.Errorf("--allow-net: %w", err)}
	}
	if err := cfg.Agent.validate(); err != nil {
		return cfg, usageError{err}
	}
	cfg.Agent.apiKey = os.Getenv("OPENAI_API_KEY")
	return cfg, nil
}

// maxPayload lets a spoken request (up to agent.MaxAudio) through, so a
// larger one reaches the talk endpoint and gets its 413.
const maxPayload = 2 * agent.MaxAudio

// Main is the daemon, usable in process by tests.
type Main struct {
	Config         UpConfig
	Stdout, Stderr io.Writer

	mu       sync.Mutex
	broker   *broker.Broker
	nc       *nats.Conn
	sys      *actor.ActorSystem
	root     *actor.PID
	services []micro.Service
	devices  *devices
	engine   *lazyEngine
	web      *webServer
	plugins  *tool.Plugins
	url      string
}

// URL is the client URL once Run has returned.
func (m *Main) URL() string { return m.url }

func (m *Main) logf(format string, args ...any) {
	fmt.Fprintf(m.Stderr, "lumen: "+format+"\n", args...)
}

// Run starts the broker, the lights and their services, then prints the
// ready line. It returns once everything is up.
func (m *Main) Run(ctx context.Context) error {
	cfg := m.Config
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	b, err := broker.Start(ctx, broker.Config{DataDir: cfg.Data, Listen: cfg.Listen, Sync: cfg.Sync,
		User: cfg.User, Password: cfg.Password, MaxBytes: cfg.MaxBytes, MaxPayload: maxPayload, MQTT: cfg.MQTT})
	if err != nil {
		return err
	}
	m.broker = b
	if cfg.Sync == "batch" {
		m.logf("--sync batch: events are flushed to disk in batches; a power cut may lose the last ones")
	}
	nc, err := b.Connect(nats.Name("lumen-daemon"))
	if err != nil {
		return err
	}
	m.nc = nc
	j := journal.New(b.JetStream())
	clock := newClock(cfg.Clock)

	m.sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	strategy := actors.DefaultStrategy()
	strategy.OnRestart = func(r actors.Restart) {
		name := lightOf(r.Child)
		what := "light " + name
		if strings.Contains(r.Child.Id, "device-") {
			what = "the LED and button of light " + name
		}
		m.logf("%s crashed (%v); restart %d in %s", what, r.Reason, r.Restarts, r.Delay)
		if name == "" {
			return
		}
		if err := actors.JournalRestart(j, name, r, clock.Now()); err != nil {
			m.logf("journal restart of %s: %v", name, err)
		}
	}
	strategy.OnStop = func(child *actor.PID, reason any) {
		m.logf("light %s failed too often (%v); it is stopped until lumen restarts", lightOf(child), reason)
	}
	root, err := actors.NewRoot(m.sys, strategy)
	if err != nil {
		return err
	}
	m.root = root
	if m.devices, err = openDevices(cfg.Hardware, cfg.Lights, m.logf); err != nil {
		return err
	}
	status := newStatusLine(m.Stdout, cfg.Lights)
	allow, _ := netpolicy.ParseAllow(cfg.AllowNet) // validated with the flags
	m.engine = m.startToolEngine()
	m.plugins = m.openPlugins(cfg.Data)
	sec, err := secrets.Open(filepath.Join(cfg.Data, "secrets"))
	if err != nil {
		m.logf("secrets: %v; tools run without secrets", err)
		sec = nil
	}
	minSource, tick := sourceMinInterval(m.logf)
	model := cfg.Agent.model()
	if model == nil {
		m.logf("agent: off (no model configured); set LUMEN_MODEL and OPENAI_BASE_URL or OPENAI_API_KEY to talk to the light")
	}
	hooks := source.NewHooks(m.sys.Root, cfg.User, cfg.Password)
	if cfg.HTTP != "" {
		if m.web, err = listenWeb(cfg.HTTP, hooks, cfg.User != ""); err != nil {
			return err
		}
	}
	demo := machine.Demo()
	for _, name := range cfg.Lights {
		props, err := light.Props(light.Config{Name: name, Journal: j, Clock: clock, Seed: &demo,
			SnapshotEvery: cfg.SnapshotEvery, CompactAbove: compactThreshold(cfg.MaxBytes), Logf: m.logf})
		if err != nil {
			return err
		}
		pid, err := actors.SpawnChild(m.sys, root, "light-"+name, props)
		if err != nil {
			return err
		}
		if err := light.WaitApplied(ctx, m.sys.Root, pid, j, name); err != nil {
			return err
		}
		var devPID atomic.Pointer[actor.PID] // the hardware actor answers the gpio pin checks once spawned
		svc, err := light.Serve(nc, m.sys.Root, pid, name, groupsOf(cfg.Groups, name), 30*time.Second, light.WithSourceMinInterval(minSource), light.WithToolCatalog(tool.NewCatalog(m.plugins)),
			light.WithSourceCheck(device.SourceCheck(m.sys.Root, devPID.Load, 10*time.Second)))
		if err != nil {
			return err
		}
		m.services = append(m.services, svc)
		dev := m.devices.byLight[name]
		dprops, err := device.Props(device.Config{Light: name, Device: dev, Inputs: m.devices.inputs[name], Journal: j, Conn: nc,
			Render: cfg.Hardware.renderOptions(dev.Pixels()), Gestures: cfg.Hardware.gestures(), Logf: m.logf,
			OnShow: func(state string, raw, _ []hardware.RGB) { status.show(name, state, raw) }})
		if err != nil {
			return err
		}
		dpid, err := actors.SpawnChild(m.sys, root, "device-"+name, dprops)
		if err != nil {
			return err
		}
		devPID.Store(dpid)
		if err := device.Serve(svc, m.sys.Root, dpid, name, 10*time.Second); err != nil {
			return err
		}
		var engine tool.Engine
		if m.engine != nil {
			engine = m.engine
		}
		tprops, err := tool.Props(tool.Config{Light: name, Engine: engine, Allow: allow, Secrets: sec, Plugins: m.plugins, Conn: nc, Journal: j, Logf: m.logf})
		if err != nil {
			return err
		}
		tpid, err := actors.SpawnChild(m.sys, root, "tools-"+name, tprops)
		if err != nil {
			return err
		}
		if err := tool.Serve(svc, m.sys.Root, tpid, name, time.Minute); err != nil {
			return err
		}
		sprops, err := source.Props(source.Config{Light: name, Tools: tpid, Conn: nc, Journal: j, Tick: tick, Hooks: m.web.URL(), Logf: m.logf})
		if err != nil {
			return err
		}
		spid, err := actors.SpawnChild(m.sys, root, "sources-"+name, sprops)
		if err != nil {
			return err
		}
		hooks.Add(name, spid)
		if err := m.startAgent(svc, nc, j, root, name, model); err != nil {
			return err
		}
	}
	// The services' subscriptions must have reached the server before
	// anyone is told to use them.
	if err := nc.FlushTimeout(30 * time.Second); err != nil {
		return fmt.Errorf("register the services: %w", err)
	}
	m.url = b.ClientURL()
	fmt.Fprintf(m.Stdout, "lumen: ready %s\n", m.url)
	fmt.Fprintf(m.Stdout, "lumen: watch it with: nats --server %s sub 'lumen.%s.evt.>'\n", m.url, cfg.Lights[0])
	m.announceListeners()
	return nil
}

// sourceMinInterval returns the shortest interval a data source may have
// and how often the source managers check their schedules. The minimum is
// source.MinPollInterval (10 s); LUMEN_SOURCE_MIN_INTERVAL_MS lowers it and
// exists for tests only, which cannot wait 10 s per fetch.
func sourceMinInterval(logf func(string, ...any)) (minIv, tick time.Duration) {
	minIv, tick = datasource.MinPollInterval, time.Second
	if v := os.Getenv("LUMEN_SOURCE_MIN_INTERVAL_MS"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			logf("LUMEN_SOURCE_MIN_INTERVAL_MS=%q is not a positive number of milliseconds; ignored", v)
			return minIv, tick
		}
		minIv = time.Duration(ms) * time.Millisecond
		tick = min(max(minIv/4, 10*time.Millisecond), time.Second)
	}
	return minIv, tick
}

func lightOf(pid *actor.PID) string {
	if pid == nil {
		return ""
	}
	// Children are named light-<name> and device-<name>.
	for _, prefix := range []string{"light-", "device-", "tools-", "sources-", "agent-"} {
		if _, name, ok := strings.Cut(pid.Id, prefix); ok {
			return name
		}
	}
	return ""
}

// Close stops the services, the actors and the broker, in that order.
func (m *Main) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.web.close() // nil-safe; first, so no webhook reaches a stopping light
	m.web = nil
	for _, s := range m.services {
		_ = s.Stop()
	}
	m.services = nil
	if m.sys != nil && m.root != nil {
		_ = m.sys.Root.StopFuture(m.root).Wait()
		m.root = nil
	}
	if m.sys != nil {
		m.sys.Shutdown()
		m.sys = nil
	}
	if m.engine != nil {
		m.engine.Close()
		m.engine = nil
	}
	m.plugins.Close() // nil-safe
	m.plugins = nil
	if m.devices != nil {
		if err := m.devices.halt(); err != nil {
			m.logf("hardware: %v", err)
		}
		m.devices = nil
	}
	if m.nc != nil {
		m.nc.Close()
		m.nc = nil
	}
	if m.broker != nil {
		m.broker.Shutdown()
		m.broker = nil
	}
	return nil
}

// compactThreshold is the journal size past which lights purge what their
// snapshots cover: 3/4 of the budget, leaving room for the events that
// arrive before the next snapshot.
func compactThreshold(budget int64) uint64 {
	if budget <= 0 {
		budget = broker.DefaultMaxBytes
	}
	return uint64(budget) / 4 * 3
}

// parseGroups reads --group GROUP=LIGHT,LIGHT flags.
func parseGroups(flags []string) (map[string][]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, f := range flags {
		g, members, ok := strings.Cut(f, "=")
		if !ok || g == "" || members == "" {
			return nil, usageError{fmt.Errorf("--group %q: write GROUP=LIGHT,LIGHT", f)}
		}
		out[g] = append(out[g], strings.Split(members, ",")...)
	}
	return out, nil
}

func groupsOf(groups map[string][]string, light string) []string {
	var out []string
	for g, members := range groups {
		for _, l := range members {
			if l == light {
				out = append(out, g)
			}
		}
	}
	sort.Strings(out)
	return out
}
