package house

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/atomicfile"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
)

// HubConfig configures a hub.
type HubConfig struct {
	// Data holds the house stream, the registry, the CA and the status.
	Data string
	// Listen is the clients' host:port (like lumen up's: beyond
	// loopback it needs User and Password).
	Listen string
	// LeafListen is the Pis' host:port (TLS, nkeys).
	LeafListen string
	// User and Password are the admin's, on the client port.
	User, Password string
	// SANs are more names and addresses the hub's certificate covers.
	SANs []string
	// MaxBytes bounds the house stream (default 1 GiB); past it the
	// oldest events go (each Pi keeps its own).
	MaxBytes int64
	// Sync is broker.SyncAlways (default) or broker.SyncBatch.
	Sync string
	// Logf receives what the hub says; nil keeps it quiet.
	Logf func(format string, args ...any)
}

// DefaultLeafListen is where a hub listens for Pis by default.
const DefaultLeafListen = "0.0.0.0:7422"

// Hub is a running house hub.
type Hub struct {
	cfg    HubConfig
	b      *broker.Broker
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	reg    Registry
	since  map[string]time.Time // when each Pi last connected or went
	online map[string]bool
	addr   map[string]string // where each connected Pi connects from (host:port)
	// machines are the instance kept for each Pi's key (gate.go);
	// refused the second machines of Pis, said which the log named.
	machines map[string]Machine
	refused  map[string]*refusal
	said     map[string]bool
	// published is what the Pis bucket says of each Pi (the watch's).
	published map[string]string
	pisKV     jetstream.KeyValue
	nc        *nats.Conn
	history   *journal.HistoryServer // the house stream, for the hub's clients
	// relays are the relay of each Pi account's announcements
	// (services.go), by account name.
	relays map[string]*nats.Subscription
	// lags is how far the house stream is behind each Pi (status.go).
	lags map[string]measured
	// dir is the house's directory for the Pis (directory.go).
	dir directory
}

// watchEvery is how often the hub reads its registry and writes the Pis'
// status: `pi add` waits for it, so a Pi started right after is accepted.
const watchEvery = 250 * time.Millisecond

// NewHub checks cfg.
func NewHub(cfg HubConfig) (*Hub, error) {
	if cfg.Data == "" {
		return nil, errors.New("house: the hub needs a data directory (--data)")
	}
	if cfg.LeafListen == "" {
		cfg.LeafListen = DefaultLeafListen
	}
	if (cfg.User == "") != (cfg.Password == "") {
		return nil, errors.New("give --user and --password together, or neither")
	}
	if err := broker.CheckAddr("--listen", cmp.Or(cfg.Listen, broker.DefaultListen), cfg.User != ""); err != nil {
		return nil, fmt.Errorf("--listen %s would let other machines in as the admin without credentials: set --user and --password, or listen on 127.0.0.1", cfg.Listen)
	}
	if _, _, err := net.SplitHostPort(cfg.LeafListen); err != nil {
		return nil, fmt.Errorf("--leaf-listen %q is not HOST:PORT", cfg.LeafListen)
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = broker.DefaultMaxBytes
	}
	return &Hub{cfg: cfg, done: make(chan struct{}), since: map[string]time.Time{}, online: map[string]bool{}, addr: map[string]string{},
		refused: map[string]*refusal{}, said: map[string]bool{}, published: map[string]string{},
		relays: map[string]*nats.Subscription{}, lags: map[string]measured{}}, nil
}

// Run starts the hub's server with the registered Pis and the house
// stream, then keeps both in step with the registry until Close.
func (h *Hub) Run(ctx context.Context) error {
	ca, err := EnsureCA(Dir(h.cfg.Data))
	if err != nil {
		return err
	}
	leafHost, _, err := net.SplitHostPort(h.cfg.LeafListen)
	if err != nil {
		return fmt.Errorf("house: --leaf-listen %q is not HOST:PORT", h.cfg.LeafListen)
	}
	cert, err := ca.ServerCert(HubHosts(leafHost, h.cfg.SANs))
	if err != nil {
		return err
	}
	reg, err := LoadRegistry(h.cfg.Data)
	if err != nil {
		return err
	}
	h.reg = reg
	if h.machines, err = loadMachines(h.cfg.Data); err != nil {
		return err
	}
	accounts := []broker.LeafAccount{refusedAccount()}
	for _, p := range reg.Pis {
		accounts = append(accounts, piAccount(p))
	}
	h.b, err = broker.Start(ctx, broker.Config{
		DataDir: h.cfg.Data, Listen: h.cfg.Listen, User: h.cfg.User, Password: h.cfg.Password,
		Sync: h.cfg.Sync, Name: "lumen-hub", Domain: HubDomain, Logf: h.cfg.Logf,
		Leaf: &broker.LeafListener{Addr: h.cfg.LeafListen, Cert: cert, Gate: h, Accounts: accounts},
		Streams: func(ctx context.Context, js jetstream.JetStream) error {
			if _, err := js.CreateOrUpdateStream(ctx, StreamConfig(reg, h.cfg.MaxBytes)); err != nil {
				return err
			}
			return writeOwners(ctx, js, reg)
		},
		Readable: []string{Stream, "KV_" + LightsBucket, "KV_" + PisBucket},
	})
	if err != nil {
		return err
	}
	if err := h.start(reg); err != nil {
		h.b.Shutdown()
		return err
	}
	js, err := jetstream.New(h.nc)
	if err == nil {
		h.history, err = journal.New(js, journal.WithStream(Stream)).ServeHistory(h.nc)
	}
	if err != nil {
		h.b.Shutdown()
		return fmt.Errorf("house: serve the house's history: %w", err)
	}
	if err := h.markApplied(reg.Generation); err != nil {
		h.b.Shutdown()
		return err
	}
	wctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.watch(wctx)
	return nil
}

// URL is the clients' NATS URL.
func (h *Hub) URL() string { return h.b.ClientURL() }

// Door is how the hub's HTTP door connects (broker.Broker.Door).
func (h *Hub) Door() []nats.Option { return h.b.Door() }

// LeafAddr is the Pis' host:port.
func (h *Hub) LeafAddr() string { return h.b.LeafAddr() }

// JetStream is the hub's own JetStream context (domain hub).
func (h *Hub) JetStream() jetstream.JetStream { return h.b.JetStream() }

// Close stops the hub.
func (h *Hub) Close() error {
	if h.cancel != nil {
		h.cancel()
		<-h.done
	}
	if h.history != nil {
		h.history.Stop()
	}
	if h.nc != nil {
		h.nc.Close()
	}
	if h.b != nil {
		h.b.Shutdown()
	}
	return nil
}

// start connects the hub's services and relays.
func (h *Hub) start(reg Registry) error {
	nc, err := h.b.Connect(nats.Name("lumen-hub"))
	if err != nil {
		return fmt.Errorf("house: connect in process: %w", err)
	}
	h.nc = nc
	if err := h.serve(); err != nil {
		return err
	}
	for _, p := range reg.Pis {
		if err := h.relay(p); err != nil {
			return err
		}
	}
	return nil
}

// watch applies registry changes and writes the status, until ctx ends.
func (h *Hub) watch(ctx context.Context) {
	defer close(h.done)
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := h.apply(ctx); err != nil {
			h.cfg.Logf("hub: %v", err)
		}
		if err := h.writeStatus(ctx); err != nil {
			h.cfg.Logf("hub: status: %v", err)
		}
	}
}

// apply takes a new generation of the registry: the Pis the server
// accepts, and the sources of the house stream.
func (h *Hub) apply(ctx context.Context) error {
	reg, err := LoadRegistry(h.cfg.Data)
	if err != nil || reg.Generation == h.reg.Generation {
		return err
	}
	// A new Pi's account first, then its source: the house stream hears
	// only through accounts made before it subscribes.
	for _, p := range reg.Pis {
		if h.relays[accountName(p)] != nil {
			continue
		}
		if err := h.b.AddLeafAccount(piAccount(p)); err != nil {
			return err
		}
		if err := h.relay(p); err != nil {
			return err
		}
	}
	for name, sub := range h.relays {
		if !slices.ContainsFunc(reg.Pis, func(p Pi) bool { return accountName(p) == name }) {
			_ = sub.Unsubscribe()
			delete(h.relays, name)
		}
	}
	// Owners first: a reader of the copy takes a light's events only
	// from the Pi the bucket names.
	if err := writeOwners(ctx, h.b.JetStream(), reg); err != nil {
		return err
	}
	if _, err := h.b.JetStream().UpdateStream(ctx, StreamConfig(reg, h.cfg.MaxBytes)); err != nil {
		return fmt.Errorf("the house stream's sources: %w", err)
	}
	// A removed Pi's connection stays open, and a server may call
	// itself anything: on any removal or new key every Pi is
	// disconnected, and those still registered join again within 2 s.
	for _, p := range h.reg.Pis {
		if now := reg.Find(p.Name); now == nil || now.PublicKey != p.PublicKey {
			if err := h.b.KickAll(); err != nil {
				return err
			}
			break
		}
	}
	h.mu.Lock()
	h.reg = reg
	for key := range h.machines {
		if reg.byKey(key) == nil {
			delete(h.machines, key)
		}
	}
	h.save(h.saveMachines())
	h.mu.Unlock()
	h.cfg.Logf("hub: registry generation %d: %d Pis", reg.Generation, len(reg.Pis))
	return h.markApplied(reg.Generation)
}

const appliedFile = "applied"

func (h *Hub) markApplied(gen uint64) error {
	return atomicfile.WriteBytes(filepath.Join(Dir(h.cfg.Data), appliedFile), []byte(strconv.FormatUint(gen, 10)+"\n"), 0o600)
}

// Applied is the registry generation a running hub has applied, or 0.
func Applied(data string) uint64 {
	b, err := os.ReadFile(filepath.Join(Dir(data), appliedFile))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// WaitApplied waits until a running hub on data has applied generation
// gen; a hub that does not run applies it when it starts.
func WaitApplied(ctx context.Context, data string, gen uint64) error {
	if !broker.InUse(data) {
		return nil
	}
	for Applied(data) < gen {
		select {
		case <-ctx.Done():
			return fmt.Errorf("house: the running hub did not take the change (generation %d): is it stuck? %w", gen, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
