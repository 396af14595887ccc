// Package daemon assembles a running Lumen: the embedded NATS server and
// its journal, and for each light the supervised actors that make it — its
// state machine, its hardware, its tools, its data sources and its agent —
// with their NATS services, the tool engine, the webhooks and the clock.
// `lumen up` is a thin main over it; tests run it in process.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/device"
	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/actors/light/service"
	"github.com/lumen-home/lumen/actors/source"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/ha"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/metrics"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/ingress"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/repair"
	"github.com/lumen-home/lumen/nats/wire"
	"github.com/lumen-home/lumen/plugins"
	"github.com/lumen-home/lumen/plugins/netpolicy"
	"github.com/lumen-home/lumen/plugins/secrets"
	"github.com/lumen-home/lumen/web"
)

// maxPayload lets a spoken request (up to agent.MaxAudio) through, so a
// larger one reaches the talk endpoint and gets its 413.
const maxPayload = 2 * agent.MaxAudio

// ErrDamaged is wrapped by Run's error when the journal's files are
// damaged; the error's text names the damage and the repair.
var ErrDamaged = errors.New("daemon: the journal is damaged")

// damaged is ErrDamaged with the sentence of what Check found.
type damaged struct{ rep repair.Report }

func (d damaged) Error() string        { return d.rep.String() }
func (d damaged) Is(target error) bool { return target == ErrDamaged }

// Daemon is a running Lumen.
type Daemon struct {
	cfg     Config
	budget  int64 // the journal budget Run resolved
	unclean bool  // the last run ended without Close: the lights' power_on apply
	marked  bool  // Run marked the data dir as running (markRunning)

	mu        sync.Mutex
	broker    *broker.Broker
	nc        *nats.Conn
	ingress   *ingress.Ingress       // journals the inputs clients publish
	history   *journal.HistoryServer // serves clients the journal's events
	ingressNC *nats.Conn             // the ingress's and history's own
	starting  *starting              // answers for the lights not served yet
	j         *journal.Journal
	sys       *actor.ActorSystem
	root      *actors.Root
	lights    []*Light
	devices   *devices
	engine    *plugins.Lazy // nil: the tool engine is not installed
	plugins   *tool.Plugins
	web       *web.Site
	webNC     *nats.Conn // the HTTP door's connection
	ha        *ha.Bridge // the Home Assistant bridge (--ha-mqtt); nil: none
	haNC      *nats.Conn // its connection
	hooks     *source.Hooks
	secrets   *secrets.Store
	allow     netpolicy.Operator
	model     *agent.OpenAI
	metrics   *metrics.Metrics // served on GET /metrics
	zone      string           // of schedules created without tz (clock.Zone)
	names     *names           // the lights the agents' requests may name

	stopLink context.CancelFunc // the hub link's watch; nil without a hub
	warmed   chan struct{}      // closed once the tool engine is compiled or loaded
}

// Light is what one light runs: its actors, each supervised by the
// root, and its instance of the NATS micro service.
type Light struct {
	Name                                   string
	Machine, Device, Tools, Sources, Agent *actor.PID
	Service                                micro.Service

	// changes counts the light's configuration changes on the connection
	// its services answer on: the agent reads its states and intents
	// again, and the tools and sources their definitions, before they
	// answer a request that follows one.
	changes *wire.Changes
	// shows counts, beside those, what the LED shows (a state, the
	// dimmer, the color): a led request after one waits for a model read
	// made after it, as the hardware actor may not have seen it yet.
	shows *wire.Changes
}

// New checks cfg; Run starts the daemon.
func New(cfg Config) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Daemon{cfg: cfg, warmed: make(chan struct{})}, nil
}

// Run starts the broker, then every light, and returns once each light
// has applied its journal and its services answer. After an error, Close
// releases what was started.
func (d *Daemon) Run(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	cfg, logf := &d.cfg, d.cfg.Logf
	// Only its user reads the journal, the snapshots and lumen.yaml.
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return fmt.Errorf("daemon: data dir: %w", err)
	}
	// nats-server would only notice a damaged record when a light reads
	// it, and the light would fail on every start: say so now, and how
	// to repair it. (An unreadable directory is for the broker to say.)
	// Only the blocks new or changed since the last start are read (a
	// full read of a 1 GiB journal cold from an SD card takes tens of
	// seconds): see repair.CheckStart for what that misses.
	if rep, err := repair.CheckStart(cfg.Data); err == nil && rep.Damaged() {
		return damaged{rep}
	}
	budget, err := broker.ResolveBudget(cfg.Data, cfg.MaxBytes)
	if err != nil {
		return err
	}
	logf("%s", budget.Note)
	d.budget = budget.Bytes
	// Clients wait until the lights' 503s answer for them (Listen below).
	bc := broker.Config{DataDir: cfg.Data, Listen: cfg.Listen, Sync: cfg.Sync, HoldClients: true,
		User: cfg.User, Password: cfg.Password, Lights: cfg.Lights, MaxPayload: maxPayload, MQTT: cfg.MQTT,
		MaxBytes: broker.StreamBytes(budget.Bytes), StoreMax: budget.Bytes, Reserve: cfg.DiskReserve, Notify: logf}
	if err := cfg.houseBroker(&bc); err != nil {
		return err
	}
	b, err := broker.Start(ctx, bc)
	if err != nil {
		return err
	}
	d.broker = b
	// After the broker holds the data dir: a second daemon on it stops
	// before, and leaves the first one's mark alone.
	// A full disk still starts (the journal says what it needs); the
	// lights then cannot tell the next start about this one.
	unclean, err := markRunning(cfg.Data)
	if err != nil {
		logf("%v: after a power cut, the lights' power_on will not apply", err)
	}
	d.unclean, d.marked = unclean, err == nil
	if err := d.joinHouse(ctx); err != nil {
		return err
	}
	if cfg.Sync == broker.SyncBatch {
		logf("--sync batch: events are flushed to disk every second; a power cut loses those acknowledged since the last flush")
	}
	if d.nc, err = b.Connect(nats.Name("lumen-daemon")); err != nil {
		return err
	}
	// From here until each light serves, its commands get a 503.
	if d.starting, err = answerStarting(d.nc, cfg.Lights); err != nil {
		return err
	}
	defer d.starting.close()
	// New inputs ask the disk for room first.
	d.j = journal.New(b.JetStream(), journal.WithRoom(b.Room), journal.WithWriteFailed(b.WriteFailed))
	// What clients publish to the lights' inputs is journaled by the
	// daemon, from the first client on.
	if err := d.startIngress(); err != nil {
		return err
	}
	if err := b.Listen(); err != nil {
		return err
	}
	d.metrics = metrics.New(metrics.Config{Journal: d.j.Size, Clock: cfg.Clock, Logf: logf})
	d.sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	if d.root, err = actors.NewRoot(d.sys, d.strategy()); err != nil {
		return err
	}
	if d.devices, err = openDevices(cfg.Hardware, cfg.Lights, cfg.Clock, logf); err != nil {
		return err
	}
	d.allow, _ = netpolicy.ParseAllow(cfg.AllowNet) // checked by Validate
	d.engine = d.startToolEngine()
	d.plugins = tool.OpenPlugins(tool.PluginsConfig{Dir: filepath.Join(cfg.Data, "plugins"), Engine: plugins.Config{CacheDir: plugins.CacheDir(), Clock: cfg.Clock}, Logf: logf})
	if d.secrets, err = secrets.Open(secrets.Dir(cfg.Data)); err != nil {
		logf("secrets: %v; tools run without secrets", err)
		d.secrets = nil
	}
	switch d.model = cfg.Agent.model(); {
	case d.model == nil && cfg.Agent.BaseURL != "":
		logf("agent: no chat model (set LUMEN_MODEL); everyday commands are understood locally, spoken ones transcribed at %s", cfg.Agent.BaseURL)
	case d.model == nil:
		logf("agent: off (no model configured); everyday commands are understood locally; set LUMEN_MODEL and OPENAI_BASE_URL or OPENAI_API_KEY for the rest")
	}
	d.hooks = source.NewHooks(d.sys.Root, cfg.User, cfg.Password)
	if d.web, err = web.Listen("--http", cfg.HTTP, cfg.User != "", logf); err != nil {
		return err
	}
	zone, ok := clock.Zone()
	if !ok {
		logf("time zone: the system's zone has no IANA name (neither TZ nor /etc/localtime names one in zoneinfo); schedules created without tz run in UTC: set TZ, e.g. TZ=Europe/Paris")
	}
	d.zone = zone
	d.names = newNames(wire.New(d.nc), cfg.Hub != "", cfg.groupsOf)
	for _, name := range cfg.Lights {
		l, err := d.spawnLight(ctx, name)
		if err != nil {
			return d.damagedOr(ctx, name, err)
		}
		d.lights = append(d.lights, l)
	}
	// The services' subscriptions must have reached the server before
	// anyone is told to use them.
	if err := d.nc.FlushTimeout(30 * time.Second); err != nil {
		return fmt.Errorf("daemon: register the services: %w", err)
	}
	if err := d.serveWeb(); err != nil {
		return err
	}
	return d.startHA(ctx)
}

// startIngress journals, from now on, what clients publish to the
// lights' inputs, and serves them history, on a connection of its own:
// it is on the path of every such input, beside the lights' own
// journaling.
func (d *Daemon) startIngress() error {
	logf := d.cfg.Logf
	nc, err := d.broker.Connect(nats.Name("lumen-ingress"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		// A client that publishes faster than the journal stores,
		// without waiting for acknowledgements, loses what overflows.
		logf("ingress: %v", err)
	}))
	if err != nil {
		return fmt.Errorf("daemon: the ingress: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return fmt.Errorf("daemon: the ingress: %w", err)
	}
	j := journal.New(js)
	in, err := ingress.Start(ingress.Config{Conn: nc, Journal: j, Lights: d.cfg.Lights, Clock: d.cfg.Clock, Logf: logf})
	if err != nil {
		nc.Close()
		return fmt.Errorf("daemon: the ingress: %w", err)
	}
	// Clients read history through the daemon (journal.ServeHistory),
	// on the same connection: both serve clients, apart from the lights.
	hist, err := j.ServeHistory(nc)
	if err == nil {
		// Both subscribed before the first client arrives.
		err = nc.Flush()
	}
	if err != nil {
		in.Stop()
		if hist != nil {
			hist.Stop()
		}
		nc.Close()
		return fmt.Errorf("daemon: the ingress and history: %w", err)
	}
	d.ingress, d.history, d.ingressNC = in, hist, nc
	return nil
}

// damagedOr is err, a light's failure to start, or the damage in the
// journal that made it fail: a block the start's check remembered intact
// and did not read, which the disk damaged since. The broker stops (the
// daemon is failing anyway) so that every block can be read.
func (d *Daemon) damagedOr(ctx context.Context, light string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	d.broker.Shutdown()
	if repair.Forget(d.cfg.Data) != nil {
		return err
	}
	if rep, cerr := repair.CheckStart(d.cfg.Data); cerr == nil && rep.Damaged() {
		d.cfg.Logf("light %s did not start: %v", light, err)
		return damaged{rep}
	}
	return err
}

// strategy supervises the lights' actors: a restart is logged and
// journaled as the light's restart event.
func (d *Daemon) strategy() *actors.Strategy {
	s := actors.DefaultStrategy()
	s.OnRestart = func(r actors.Restart) {
		d.metrics.Restarted(r.Light, r.Role)
		d.cfg.Logf("%s crashed (%v); restart %d in %s", d.describe(r), r.Reason, r.Restarts, r.Delay)
		if err := actors.JournalRestart(d.j, r.Light, r, d.cfg.Clock.Now()); err != nil {
			d.cfg.Logf("journal restart of %s: %v", r.Light, err)
		}
	}
	s.OnStop = func(r actors.Restart) {
		d.cfg.Logf("%s failed too often (%v); it is stopped until lumen restarts", d.describe(r), r.Reason)
	}
	return s
}

// describe names a crashed actor of a light for the log.
func (d *Daemon) describe(r actors.Restart) string {
	if r.Role == roleDevice {
		return "the LED and button of light " + r.Light
	}
	return "light " + r.Light
}

// The roles of a light's actors, which name them: <role>-<light>.
const (
	roleMachine = "light"
	roleDevice  = "device"
	roleTools   = "tools"
	roleSources = "sources"
	roleAgent   = "agent"
)

// spawnLight starts the actors of one light and its service, and returns
// them once the light has applied its journal.
func (d *Daemon) spawnLight(ctx context.Context, name string) (*Light, error) {
	cfg, logf := &d.cfg, d.cfg.Logf
	l := &Light{Name: name}
	meter := d.metrics.Light(name)
	if at, err := d.j.SnapshotTime(ctx, name); err == nil {
		meter.SnapshotAt(at) // its age counts from before this start
	}
	demo := machine.Demo()
	props, err := light.Props(light.Config{Name: name, Journal: d.j, Clock: cfg.Clock, Seed: &demo, Meter: meter,
		SnapshotEvery: cfg.SnapshotEvery, CompactAbove: compactAbove(d.budget), ForceAbove: forceAbove(d.budget), HouseFloor: d.houseFloor(), Logf: logf})
	if err != nil {
		return nil, err
	}
	if l.Machine, err = d.root.Spawn(name, roleMachine, props); err != nil {
		return nil, err
	}
	if err := light.WaitApplied(ctx, d.sys.Root, l.Machine, d.j, name); err != nil {
		return nil, err
	}
	if d.unclean {
		// Before its hardware shows anything: the LED shows the
		// power_on state first.
		if err := d.powerOn(l.Machine, name); err != nil {
			logf("light %s: power_on after an unclean stop: %v", name, err)
		}
	}
	if n, ok := cfg.Names[name]; ok {
		// Before it serves: its first answers have these names.
		if err := d.setNames(l.Machine, name, n); err != nil {
			logf("names: %s: %v (from lumen.yaml)", name, err)
		}
	}
	var devPID atomic.Pointer[actor.PID] // the hardware actor answers the gpio pin checks once spawned
	d.starting.served(name)
	opts := []service.ServeOption{service.WithSourceMinInterval(cfg.SourceMinInterval), service.WithToolCatalog(tool.NewCatalog(d.plugins)),
		service.WithSourceCheck(device.SourceCheck(d.sys.Root, devPID.Load, 10*time.Second)), service.WithWebhookBase(d.web.URL()), service.WithPage(d.web.Advertised(cfg.HTTPNames)), service.WithJournal(d.j), service.WithZone(d.zone), service.WithClock(cfg.Clock)}
	if u, err := ha.ParseBroker("--ha-mqtt", cfg.HA.URL); err == nil {
		opts = append(opts, service.WithHA(u.Host))
	}
	if cfg.Home != nil {
		opts = append(opts, service.WithHome(cfg.Home.Lat, cfg.Home.Lon))
	}
	l.Service, err = service.Serve(d.nc, d.sys.Root, l.Machine, name, cfg.groupsOf(name), 30*time.Second, opts...)
	if err != nil {
		return nil, err
	}
	// On the connection the light's services answer on: a change is
	// queued there before any request its author sends next
	// (wire.Changes).
	lw := wire.New(d.nc).Light(name)
	if l.changes, err = lw.Changes(messages.OutConfig, messages.OutIntent); err != nil {
		return nil, err
	}
	if l.shows, err = lw.Changes(messages.OutConfig, messages.OutIntent, messages.OutState, messages.OutBrightness); err != nil {
		l.changes.Stop()
		return nil, err
	}
	d.names.add(name, l.changes)
	dev := d.devices.byLight[name]
	dprops, err := device.Props(device.Config{Light: name, Device: dev, Inputs: d.devices.inputs[name], Journal: d.j, Conn: d.nc, Changes: l.shows,
		Render: cfg.Hardware.renderOptions(dev.Pixels()), Gestures: cfg.Hardware.gestures(), Clock: cfg.Clock, Logf: logf,
		OnShow: func(state string, raw, _ []hardware.RGB) {
			if cfg.OnShow != nil {
				cfg.OnShow(name, state, raw)
			}
		}})
	if err != nil {
		return nil, err
	}
	if l.Device, err = d.root.Spawn(name, roleDevice, dprops); err != nil {
		return nil, err
	}
	devPID.Store(l.Device)
	if err := device.Serve(l.Service, d.sys.Root, l.Device, name, 10*time.Second); err != nil {
		return nil, err
	}
	var engine tool.Engine
	if d.engine != nil { // a nil *plugins.Lazy must not become a non-nil Engine
		engine = d.engine
	}
	tprops, err := tool.Props(tool.Config{Light: name, Engine: engine, Allow: d.allow, Secrets: d.secrets, Plugins: d.plugins,
		Conn: d.nc, Changes: l.changes, Journal: d.j, Clock: cfg.Clock, Web: cfg.web(), Meter: meter, Logf: logf})
	if err != nil {
		return nil, err
	}
	if l.Tools, err = d.root.Spawn(name, roleTools, tprops); err != nil {
		return nil, err
	}
	if err := tool.Serve(l.Service, d.sys.Root, l.Tools, name, time.Minute); err != nil {
		return nil, err
	}
	sprops, err := source.Props(source.Config{Light: name, Tools: l.Tools, Conn: d.nc, Changes: l.changes, Journal: d.j, Tick: cfg.sourceTick(),
		Hooks: d.web.URL(), Clock: cfg.Clock, Meter: meter, Logf: logf})
	if err != nil {
		return nil, err
	}
	if l.Sources, err = d.root.Spawn(name, roleSources, sprops); err != nil {
		return nil, err
	}
	d.hooks.Add(name, l.Sources, l.changes.Sync)
	acfg := agent.Config{Light: name, Journal: d.j, Clock: cfg.Clock, MaxTurns: cfg.Agent.MaxTurns, CallTimeout: cfg.Agent.Timeout, Logf: logf, Meter: meter,
		Tools: &agent.Tools{Light: lw, House: d.names, Forbidden: slices.Clone(cfg.Agent.Forbid), Changed: l.changes.Changed}}
	if d.model != nil { // a nil *OpenAI must not become a non-nil Model
		acfg.Model = d.model
	}
	acfg.Transcriber, acfg.Speaker = cfg.Agent.voice(d.model, logf)
	aprops, err := agent.Props(acfg)
	if err != nil {
		return nil, err
	}
	if l.Agent, err = d.root.Spawn(name, roleAgent, aprops); err != nil {
		return nil, err
	}
	if err := agent.Serve(l.Service, d.sys.Root, l.Agent, name); err != nil {
		return nil, err
	}
	return l, nil
}

// startToolEngine compiles the tools' engine into the disk cache in the
// background, saying how it goes, and returns the engine that loads on
// the first call; nil when the engine is not installed.
func (d *Daemon) startToolEngine() *plugins.Lazy {
	logf := d.cfg.Logf
	path := plugins.FindGuest()
	if path == "" {
		logf("tools: the tool engine (guest.wasm) is not installed; custom tools cannot run (build it with the Taskfile's guest task)")
		close(d.warmed)
		return nil
	}
	e := plugins.NewLazy(plugins.Config{WasmPath: path, Name: "guest", CacheDir: plugins.CacheDir(), Precompiled: plugins.FindPrecompiled(path),
		Compile: d.cfg.CompileGuest, Clock: d.cfg.Clock})
	said := false
	done := e.Warm(2*time.Second, func(p plugins.Progress) {
		switch p.Stage {
		case plugins.StageCompiling:
			if !said {
				logf("tools: compiling the tool engine (first start only; it is cached)…")
				said = true
			} else {
				logf("tools: still compiling… %.0f s", p.Elapsed.Seconds())
			}
		case plugins.StageCached, plugins.StageCompiled:
			logf("tools: the tool engine is ready (compiled in %.1f s)", p.Elapsed.Seconds())
		case plugins.StageCacheHit:
			if said { // another lumen compiled it meanwhile
				logf("tools: the tool engine is ready (compiled by another lumen, %.1f s)", p.Elapsed.Seconds())
			}
		case plugins.StagePrecompiled:
			logf("tools: the tool engine is ready (precompiled, %s, in %.1f s)", p.Path, p.Elapsed.Seconds())
		case plugins.StagePrecompiledRefused:
			logf("tools: not using the precompiled tool engine: %v; compiling it instead", p.Err)
		case plugins.StageFailed:
			logf("tools: the tool engine failed to load: %v", p.Err)
		}
	})
	go func() {
		<-done
		// Reading and hashing the 19 MB guest leaves garbage an idle
		// daemon should not keep.
		debug.FreeOSMemory()
		close(d.warmed)
	}()
	return e
}

// Warmed is closed once the start's background work is done: the tool
// engine compiled into its cache, or loaded from it (at once when it is
// not installed).
func (d *Daemon) Warmed() <-chan struct{} { return d.warmed }

// URL is the NATS URL clients connect to, once Run has returned.
func (d *Daemon) URL() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broker == nil {
		return ""
	}
	return d.broker.ClientURL()
}

// WebhookURL is http://HOST:PORT of the webhooks, "" without --http.
func (d *Daemon) WebhookURL() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.web.URL()
}

// MQTTAddr is the MQTT listener's HOST:PORT, "" without --mqtt.
func (d *Daemon) MQTTAddr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.broker == nil {
		return ""
	}
	return d.broker.MQTTAddr()
}

// JetStream is the daemon's own JetStream context, once Run has
// returned: it may do what no client may (delete a light's consumer,
// purge the journal), which tests use to play the accidents the daemon
// recovers from.
func (d *Daemon) JetStream() jetstream.JetStream {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.broker.JetStream()
}

// Lights are the lights running, in the order of the configuration.
func (d *Daemon) Lights() []*Light {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*Light(nil), d.lights...)
}

// Close stops the webhooks, the services, the actors, the hardware and
// the broker, in that order. It may be called after a failed Run.
func (d *Daemon) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopHA()    // first: Home Assistant is told offline while the lights still answer
	d.web.Close() // nil-safe; first, so no webhook reaches a stopping light
	d.web = nil
	if d.webNC != nil {
		d.webNC.Close()
		d.webNC = nil
	}
	if d.stopLink != nil {
		d.stopLink()
		d.stopLink = nil
	}
	if d.ingress != nil {
		d.ingress.Stop()
		d.history.Stop()
		d.ingressNC.Close()
		d.ingress, d.history, d.ingressNC = nil, nil, nil
	}
	for _, l := range d.lights {
		_ = l.Service.Stop()
		if l.shows != nil {
			l.shows.Stop()
		}
		if l.changes != nil {
			l.changes.Stop()
		}
	}
	d.lights = nil
	if d.root != nil {
		d.root.Stop()
		d.root = nil
	}
	if d.sys != nil {
		d.sys.Shutdown()
		d.sys = nil
	}
	if d.engine != nil {
		d.engine.Close()
		d.engine = nil
	}
	d.plugins.Close() // nil-safe
	d.plugins = nil
	var err error
	if d.devices != nil {
		if err = d.devices.halt(); err != nil {
			d.cfg.Logf("hardware: %v", err)
		}
		d.devices = nil
	}
	if d.nc != nil {
		d.nc.Close()
		d.nc = nil
	}
	if d.broker != nil {
		d.broker.Shutdown()
		d.broker = nil
	}
	if d.marked {
		markStopped(d.cfg.Data)
		d.marked = false
	}
	return err
}
