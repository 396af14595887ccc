// Package broker runs the embedded NATS server with JetStream that is both
// Lumen's bus and its journal.
//
// It starts the server the way nats-server's own tests do (server.NewServer,
// go s.Start(), ReadyForConnections), keeps an in-process client for the
// daemon, and makes sure the LUMEN stream and the LUMEN_SNAP bucket exist.
package broker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/subject"
)

// Sync modes of Config.Sync.
const (
	// SyncAlways fsyncs before every acknowledgement, server-wide: an
	// acknowledged event survives a power cut (the default).
	SyncAlways = "always"
	// SyncBatch uses the server's periodic fsync: faster, but events
	// acknowledged since the last sync can be lost on a power cut.
	SyncBatch = "batch"
)

// Defaults applied to a zero Config field.
const (
	// DefaultListen is the client address used when Config.Listen is empty.
	DefaultListen = "127.0.0.1:4222"
	// syncInterval is how often the server flushes its files and writes
	// its streams' index.
	syncInterval = time.Second

	// DefaultMaxBytes is the LUMEN stream budget used when Config.MaxBytes
	// is zero.
	DefaultMaxBytes int64 = 1 << 30
	// defaultStartTimeout bounds Start when ctx has no deadline.
	defaultStartTimeout = 10 * time.Second
)

// Config configures the embedded server. The zero value of every field but
// DataDir is a usable default.
type Config struct {
	// DataDir holds the JetStream store (DataDir/jetstream) and a lock
	// file. It is created if missing. Required.
	DataDir string
	// Listen is the host:port clients connect to; empty means
	// DefaultListen and port 0 picks a free port. A host that is not
	// loopback (127.0.0.0/8, ::1, localhost) is refused unless
	// credentials are configured.
	Listen string
	// User and Password, both set, require clients to authenticate as
	// User (see users.go for what a client may do).
	User     string
	Password string
	// Lights are the lights whose inputs the journal takes
	// (lumen.<light>.evt.in.>): a publish to the inputs of another light
	// is not journaled. Nil keeps the stream's subjects as they are
	// (every light's, for a new stream): what Inspect does.
	Lights []string
	// MQTT, when set, is the host:port of the server's own MQTT 3.1.1
	// listener (port 0 picks a free one): an MQTT client's publish to
	// home/doorbell reaches NATS subscribers of home.doorbell. It keeps
	// its sessions in JetStream ($MQTT_… streams) and presents the same
	// credentials as NATS clients; like Listen, a host that is not
	// loopback is refused without credentials.
	MQTT string
	// Sync is SyncAlways (the default when empty) or SyncBatch.
	Sync string
	// MaxPayload caps the size of one message; zero keeps the server
	// default (1 MiB).
	MaxPayload int32
	// MaxBytes is the size budget of the LUMEN stream; zero means
	// DefaultMaxBytes. When it is reached appends are refused rather than
	// old events dropped: the owner purges what snapshots cover.
	MaxBytes int64
	// StoreMax bounds everything JetStream keeps (every stream and
	// bucket together: the journal budget); zero leaves nats-server's
	// own limit, 3/4 of the disk's free space at each start.
	StoreMax int64
	// Reserve is the free space Room wants on DataDir's file system;
	// zero means Reserve(StoreMax) (or of MaxBytes without StoreMax),
	// negative none: then only a write error of JetStream makes Room
	// refuse (for tests of the reload after one).
	Reserve int64
	// Logf receives the server's log lines; nil keeps the server silent.
	Logf func(format string, args ...any)
	// Notify receives the broker's own lines, fewer than the server's:
	// JetStream could not write, it was reloaded. Nil: Logf.
	Notify func(format string, args ...any)

	// Name is the server's name (default "lumen"). Every server of a
	// house needs its own: a hub drops a second leaf of the same name.
	Name string
	// Domain is the server's JetStream domain, empty for none. Each
	// server of a house has its own, so that each keeps its streams.
	Domain string
	// Hub joins a house as a leaf node of its hub; nil: none.
	Hub *HubLink
	// Leaf makes the server a house's hub; nil: none.
	Leaf *LeafListener
	// Streams makes sure the server's streams exist at start (default:
	// EnsureStreams, the LUMEN stream and the LUMEN_SNAP bucket).
	Streams func(ctx context.Context, js jetstream.JetStream) error
	// Readable names the streams outside clients may read (info, get,
	// direct get: never a consumer) besides LUMEN.
	Readable []string
	// HoldClients keeps the client port closed until Listen: in-process
	// connections (Connect) can subscribe what must answer outside
	// clients before the first of them arrives.
	HoldClients bool
}

// Validate reports whether c can be started, with a sentence that says what
// to change.
func (c Config) Validate() error {
	_, _, err := c.normalize()
	return err
}

// normalize validates c and returns it with defaults applied, together with
// the parsed listen host and port.
func (c Config) normalize() (Config, hostPort, error) {
	if c.DataDir == "" {
		return c, hostPort{}, errors.New("broker: no data directory: set Config.DataDir to where the journal lives")
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	switch c.Sync {
	case "":
		c.Sync = SyncAlways
	case SyncAlways, SyncBatch:
	default:
		return c, hostPort{}, fmt.Errorf("broker: unknown sync mode %q: use %q (fsync before every ack) or %q (periodic fsync)", c.Sync, SyncAlways, SyncBatch)
	}
	if c.MaxPayload < 0 {
		return c, hostPort{}, fmt.Errorf("broker: max payload %d is negative: use 0 for the default or a size in bytes", c.MaxPayload)
	}
	switch {
	case c.MaxBytes < 0:
		return c, hostPort{}, fmt.Errorf("broker: max bytes %d is negative: use 0 for the default (1 GiB) or a size in bytes", c.MaxBytes)
	case c.MaxBytes == 0:
		c.MaxBytes = DefaultMaxBytes
	}
	if c.StoreMax < 0 {
		return c, hostPort{}, fmt.Errorf("broker: store max %d is negative: use 0 for nats-server's own limit or a size in bytes", c.StoreMax)
	}
	if c.StoreMax > 0 && c.MaxBytes >= c.StoreMax {
		return c, hostPort{}, fmt.Errorf("broker: the LUMEN stream's budget %d leaves nothing of the store's %d for the snapshots: use StreamBytes of it", c.MaxBytes, c.StoreMax)
	}
	if c.Reserve == 0 {
		c.Reserve = Reserve(cmp.Or(c.StoreMax, c.MaxBytes))
	}
	if (c.User == "") != (c.Password == "") {
		return c, hostPort{}, errors.New("broker: incomplete credentials: set both User and Password, or neither")
	}
	if c.User == DaemonUser || c.User == DoorUser || c.User == anonUser {
		return c, hostPort{}, fmt.Errorf("broker: user %q is Lumen's own; pick another user name", c.User)
	}
	hp, err := parseListen(c.Listen)
	if err != nil {
		return c, hostPort{}, err
	}
	if !hp.loopback() && !c.hasCredentials() {
		return c, hostPort{}, fmt.Errorf("broker: refusing to listen on %q without credentials: set User and Password, or listen on 127.0.0.1", c.Listen)
	}
	if c.MQTT != "" {
		if err := CheckAddr("MQTT", c.MQTT, c.hasCredentials()); err != nil {
			return c, hostPort{}, err
		}
	}
	return c, hp, nil
}

// CheckAddr checks the host:port of one of the daemon's listeners (what
// names it in errors) by Listen's rule: a host that is not loopback
// needs credentials, since anyone on the network could otherwise feed
// the lights.
func CheckAddr(what, addr string, credentials bool) error {
	hp, err := parseListen(addr)
	if err != nil {
		return fmt.Errorf("broker: %s address %q is not host:port with a port from 0 to 65535, e.g. 127.0.0.1:0", what, addr)
	}
	if !hp.loopback() && !credentials {
		return fmt.Errorf("broker: refusing to listen for %s on %q without credentials: set a user and password, or listen on 127.0.0.1", what, addr)
	}
	return nil
}

func (c Config) hasCredentials() bool {
	return c.User != "" && c.Password != ""
}

type hostPort struct {
	host string
	port int
}

func parseListen(listen string) (hostPort, error) {
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return hostPort{}, fmt.Errorf("broker: listen address %q is not host:port (for example 127.0.0.1:4222): %w", listen, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return hostPort{}, fmt.Errorf("broker: listen port %q is not a number from 0 to 65535 (0 picks a free port)", p)
	}
	return hostPort{host: host, port: port}, nil
}

// loopback reports whether only this machine can reach the address. An
// empty host means every interface.
func (hp hostPort) loopback() bool {
	if hp.host == "localhost" {
		return true
	}
	ip := net.ParseIP(hp.host)
	return ip != nil && ip.IsLoopback()
}

// ErrDirInUse is wrapped by Start's error when another process has the
// data directory.
var ErrDirInUse = errors.New("data directory in use")

// Broker is a running embedded server with an in-process client.
type Broker struct {
	cfg     Config
	srv     *server.Server
	opts    *server.Options // the server's own: it writes the MQTT port it picked
	log     *logger
	started chan struct{} // closed when srv.Start has returned
	nc      *nats.Conn
	js      jetstream.JetStream
	lock    *dirLock

	auth *auth // checks every connection; holds the passwords made at each start

	reload sync.Mutex // guards opts across reloads

	// failed is closed while JetStream keeps a write error (the disk
	// filled up under it), until watchWrites reloads it and replaces it
	// with an open one (WriteFailed).
	failedMu sync.Mutex
	failed   chan struct{}
	done     chan struct{} // closed by Shutdown
	watching sync.WaitGroup

	shutdown sync.Once
}

// Start validates cfg, starts the server on cfg.DataDir, waits until it
// accepts clients and ensures the LUMEN stream and LUMEN_SNAP bucket exist.
// It fails instead of waiting when the port is taken or another server
// uses the data directory. ctx bounds the start-up (10 s without a
// deadline).
func Start(ctx context.Context, cfg Config) (*Broker, error) {
	cfg, hp, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("broker: create data directory: %w", err)
	}
	lock, err := lockDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	auth, err := newAuth(cfg)
	if err != nil {
		lock.release()
		return nil, err
	}
	migrated, err := migrateAccount(cfg.DataDir)
	if err != nil {
		lock.release()
		return nil, err
	}
	if migrated && cfg.Logf != nil {
		cfg.Logf("broker: moved the journal to the daemon's own NATS account (%s); clients reach it through imports", DaemonAccount)
	}

	opts := &server.Options{}
	// LUMEN always: a client asks for it first (a hub answers that it
	// has none).
	readable := append([]string{subject.Stream}, cfg.Readable...)
	if err := configureAccounts(opts, readable, cfg.MQTT != ""); err != nil {
		lock.release()
		return nil, err
	}
	if cfg.Leaf != nil {
		if err := leafAccounts(opts, cfg.Leaf.Accounts); err != nil {
			lock.release()
			return nil, err
		}
	}
	*opts = server.Options{
		Accounts:        opts.Accounts,
		ServerName:      cmp.Or(cfg.Name, "lumen"),
		JetStreamDomain: cfg.Domain,
		Host:            hp.host,
		Port:            hp.port,
		JetStream:       true,
		// The server appends "jetstream" itself: DataDir/jetstream.
		StoreDir:   cfg.DataDir,
		SyncAlways: cfg.Sync == SyncAlways,
		// Every second, not nats-server's default 2 minutes: the most a
		// power cut takes with --sync batch, and how old the stream's
		// index may be, which a start after a crash rebuilds from there
		// (2.2 s for a million events at 2 minutes, a fraction at 1 s).
		SyncInterval: syncInterval,
		MaxPayload:   cfg.MaxPayload,
		// Zero leaves the server's own limit.
		JetStreamMaxStore: cfg.StoreMax,
		// The broker checks every connection and puts it in its
		// account (auth.go).
		CustomClientAuthentication: auth,
		// An embedded server must not take over the process's signals.
		NoSigs: true,
		NoLog:  true,
		// Listen starts the accept loop the server then skips.
		DontListen: cfg.HoldClients,
	}
	if hp.port == 0 {
		opts.Port = server.RANDOM_PORT // 0 would mean 4222 to the server
	}
	if old := reservedOnDisk(cfg.DataDir); cfg.StoreMax > 0 && old >= cfg.StoreMax {
		// Streams made under a larger budget (the former 1 GiB
		// default) are loaded with their reservations, and JetStream
		// would refuse to lower them below its limit: start with room
		// for them, and take the budget once they are lowered.
		opts.JetStreamMaxStore = cfg.StoreMax + old
	}
	if err := cfg.houseOptions(opts); err != nil {
		lock.release()
		return nil, err
	}
	if cfg.MQTT != "" {
		mhp, _ := parseListen(cfg.MQTT) // checked by normalize
		opts.MQTT.Host, opts.MQTT.Port = mhp.host, mhp.port
		if mhp.port == 0 {
			opts.MQTT.Port = server.RANDOM_PORT // 0 would mean MQTT off
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("broker: configure server: %w", err)
	}
	auth.mu.Lock()
	auth.srv = srv
	auth.mu.Unlock()
	// Always install a logger: the server reports a failed listen or a
	// failed JetStream start only through Fatalf, and waiting for
	// readiness would otherwise run into the timeout.
	log := newLogger(cfg.Logf)
	srv.SetLoggerV2(log, false, false, false)

	b := &Broker{cfg: cfg, srv: srv, opts: opts, log: log, started: make(chan struct{}), lock: lock, auth: auth,
		done: make(chan struct{}), failed: make(chan struct{})}
	go func() {
		defer close(b.started)
		srv.Start()
	}()
	b.watching.Add(1)
	go b.watchWrites()
	if err := b.waitReady(ctx); err != nil {
		b.Shutdown()
		return nil, err
	}
	if cfg.Sync == SyncBatch && cfg.Logf != nil {
		cfg.Logf("broker: sync batch: events acknowledged since the last periodic fsync can be lost on a power cut")
	}

	b.nc, err = b.Connect(nats.Name("lumen-broker"))
	if err != nil {
		b.Shutdown()
		return nil, fmt.Errorf("broker: connect in process: %w", err)
	}
	b.js, err = jetstream.New(b.nc)
	if err != nil {
		b.Shutdown()
		return nil, fmt.Errorf("broker: jetstream: %w", err)
	}
	ensure := cfg.Streams
	if ensure == nil {
		ensure = func(ctx context.Context, js jetstream.JetStream) error {
			return EnsureStreams(ctx, js, cfg.MaxBytes, cfg.Lights)
		}
	}
	if err := ensure(ctx, b.js); err != nil {
		b.Shutdown()
		return nil, err
	}
	if cfg.StoreMax > 0 && opts.JetStreamMaxStore != cfg.StoreMax {
		if err := b.reloadJetStream(cfg.StoreMax); err != nil {
			b.Shutdown()
			return nil, fmt.Errorf("broker: take the journal budget: %w", err)
		}
	}
	return b, nil
}

// waitReady polls the server until it accepts clients, returns the first
// fatal error it logs, or gives up when ctx ends.
func (b *Broker) waitReady(ctx context.Context) error {
	for {
		if b.srv.ReadyForConnections(50 * time.Millisecond) {
			return nil
		}
		select {
		case msg := <-b.log.fatal:
			return b.startError(msg)
		case <-ctx.Done():
			return fmt.Errorf("broker: server not ready on %s: %w", b.cfg.Listen, ctx.Err())
		default:
		}
	}
}

// startError is the error for the server's fatal start-up message. When
// a port is taken it names the listener's address and wraps
// syscall.EADDRINUSE, so that a caller can tell which of its settings to
// change.
func (b *Broker) startError(msg string) error {
	if !strings.Contains(msg, syscall.EADDRINUSE.Error()) {
		return fmt.Errorf("broker: start server: %s", msg)
	}
	what, addr := "clients", b.cfg.Listen
	if strings.Contains(msg, "MQTT") { // "Unable to listen for MQTT connections: …"
		what, addr = "MQTT clients", b.cfg.MQTT
	}
	return fmt.Errorf("broker: cannot listen for %s on %s: %w: another server or program has this port; stop it, or pick another port (port 0 picks a free one)", what, addr, syscall.EADDRINUSE)
}

// ClientURL is the URL other processes (the nats CLI, the lumen CLI) use to
// reach the server, with the real port when Listen asked for port 0. An
// unspecified host (0.0.0.0, ::) is reported as 127.0.0.1.
func (b *Broker) ClientURL() string {
	u, err := url.Parse(b.srv.ClientURL())
	if err != nil {
		return b.srv.ClientURL()
	}
	if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsUnspecified()) || u.Hostname() == "" {
		u.Host = net.JoinHostPort("127.0.0.1", u.Port())
	}
	return u.String()
}

// MQTTAddr is the host:port of the MQTT listener, with the real port when
// Config.MQTT asked for port 0 (an unspecified host is reported as
// 127.0.0.1), or "" when MQTT is off. Valid once Start has returned.
func (b *Broker) MQTTAddr() string {
	if b.cfg.MQTT == "" {
		return ""
	}
	// Start waited for the listener (readiness covers it), and the server
	// wrote the port under its lock before that.
	b.reload.Lock()
	defer b.reload.Unlock()
	return DialAddr(b.opts.MQTT.Host, b.opts.MQTT.Port)
}

// displayAddr is host:port as a client dials it: an unspecified host is
// reported as 127.0.0.1.
func DialAddr(host string, port int) string {
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// Connect opens a new in-process connection of the daemon (DaemonUser).
// opts are applied after its credentials.
func (b *Broker) Connect(opts ...nats.Option) (*nats.Conn, error) {
	all := append([]nats.Option{nats.InProcessServer(b.srv), b.daemonAuth()}, opts...)
	u := b.ClientURL()
	if b.srv.Addr() == nil {
		// Held clients (before Listen): no port yet, and an in-process
		// connection never dials the URL it is given.
		u = "nats://127.0.0.1"
	}
	return nats.Connect(u, all...)
}

// Listen opens the client port of a broker started with HoldClients
// (without it the port is open once Start returns, and Listen does
// nothing). A port another program has fails as Start would.
func (b *Broker) Listen() error {
	if !b.cfg.HoldClients || b.srv.Addr() != nil {
		return nil
	}
	b.srv.AcceptLoop(make(chan struct{}))
	if b.srv.Addr() != nil {
		return nil
	}
	select {
	case msg := <-b.log.fatal:
		return b.startError(msg)
	default:
		return fmt.Errorf("broker: cannot listen for clients on %s (the server's log says why)", b.cfg.Listen)
	}
}

// JetStream is the JetStream context of the broker's own in-process
// connection, shared by the daemon's components.
func (b *Broker) JetStream() jetstream.JetStream {
	return b.js
}

// Shutdown closes the in-process connection, stops the server, waits until
// it has flushed and stopped, and releases the data directory. It is safe
// to call more than once.
func (b *Broker) Shutdown() {
	b.shutdown.Do(func() {
		close(b.done)
		b.watching.Wait()
		if b.nc != nil {
			b.nc.Close()
		}
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
		// Start may still be logging its last lines; wait for it so
		// that nothing runs after Shutdown returns.
		<-b.started
		b.log.close()
		b.lock.release()
	})
}

// Inspect starts a private server on the data directory of a stopped
// daemon, to read its journal (lumen replay --data): on loopback, on a
// free port, without waiting for fsync.
func Inspect(ctx context.Context, dataDir string) (*Broker, error) {
	if _, err := os.Stat(filepath.Join(dataDir, "jetstream")); err != nil {
		return nil, fmt.Errorf("broker: %s holds no lumen journal (%v)", dataDir, err)
	}
	b, err := Start(ctx, Config{DataDir: dataDir, Listen: "127.0.0.1:0", Sync: SyncBatch,
		// Read what is there: a hub's directory has no LUMEN to make.
		Streams: func(context.Context, jetstream.JetStream) error { return nil }})
	if err != nil {
		return nil, fmt.Errorf("broker: open %s (is the daemon still running on it?): %w", dataDir, err)
	}
	return b, nil
}
