package ha

import (
	"cmp"
	"context"
	cryptotls "crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Config configures the bridge between a daemon's lights and Home
// Assistant's MQTT broker.
type Config struct {
	// Broker is mqtt://HOST[:PORT] (1883) or mqtts://HOST[:PORT] (8883).
	Broker         string
	User, Password string
	// Prefix is Home Assistant's discovery prefix (DefaultPrefix).
	Prefix string
	// Node names this daemon: the lights' availability topic, and the
	// MQTT client id (lumen-<node>). Stable across restarts.
	Node string
	// Version is Lumen's version, the devices' sw_version.
	Version string
	// Lights are the lights announced; Page their page ("" for none).
	Lights []string
	Page   string
	// House, at a hub, is the house's directory, read again every few
	// seconds: its lights are announced (each with its Pi's page and
	// availability besides the hub's), Lights is not used, and a light
	// that leaves the house is removed from Home Assistant.
	House House
	// Data is a directory where the bridge keeps which lights it
	// announced, to clear those that no longer run ("" keeps nothing).
	Data string
	// NC reaches the lights; their commands are journaled by
	// homeassistant.
	NC *nats.Conn
	// Pass is where the messages of Home Assistant's broker that the
	// lights' sources listen on (broker: ha) are published, at
	// datasource.HASubject: the daemon's own connection, as the sources
	// see its publishes (nil: NC).
	Pass *nats.Conn
	// TLS is the configuration of an mqtts:// broker (nil: the system's
	// roots).
	TLS *cryptotls.Config
	// Logf receives one line per change of the connection and each
	// command that fails.
	Logf func(format string, args ...any)
}

// House is the house's directory (nats/house.Hub).
type House interface {
	Lights(ctx context.Context) ([]messages.HouseLight, error)
}

// houseEvery is how often a hub's bridge reads the house's directory.
const houseEvery = 3 * time.Second

// ParseBroker checks a broker URL (flag names it in errors) and returns
// it with its port.
func ParseBroker(flag, broker string) (*url.URL, error) {
	u, err := url.Parse(broker)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%s %q: give the broker as mqtt://HOST:1883 or mqtts://HOST:8883", flag, broker)
	}
	port := map[string]string{"mqtt": "1883", "mqtts": "8883"}[u.Scheme]
	if port == "" {
		return nil, fmt.Errorf("%s %q: the scheme is mqtt:// (plain) or mqtts:// (TLS), not %s://", flag, broker, u.Scheme)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("%s %q: give only the scheme, host and port; the user and password go in --ha-user and --ha-password", flag, broker)
	}
	return u, nil
}

// Bridge is a running bridge; Close stops it.
type Bridge struct {
	cfg    Config
	broker *url.URL
	wire   *wire.Client
	client mqtt.Client
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	timers map[string]*time.Timer // a state read waiting, by light
	// heard are the topics of Home Assistant's broker subscribed to for
	// the lights' sources (broker: ha).
	heard map[string]bool
	// lights are the lights announced now, and what the bridge knows of
	// each: everything about a light goes when it is no longer followed.
	lights map[string]*followed
	// pis are the Pis' availability last published (at a hub); kept the
	// lights of the house the hub does not announce but must not remove
	// either: those their Pi publishes to Home Assistant itself, and
	// those it has not heard since it started (it cannot tell yet);
	// pisOwn the Pis said to publish their own; looked whether the house
	// was read once: until then a hub does not know which lights left.
	pis    map[string]bool
	kept   map[string]keptFor
	pisOwn map[string]bool
	looked bool
	// before are the lights the hub had announced when it started (Data's
	// record): a Pi of theirs that is away then is said to be away.
	before map[string]bool
	said   string // the last connection problem logged
	closed bool   // Close began: nothing more is started
}

// spawn runs f in a goroutine Close waits for, unless Close began.
func (b *Bridge) spawn(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.wg.Go(f)
}

// gestures are the transitions of the button's gestures, as Home
// Assistant's event types.
var gestures = map[string]string{"button_click": "click", "button_double_click": "double_click", "button_hold": "hold"}

// settle is how long the bridge waits after a light's output for the
// others of the same input, before it reads the light's state once.
const settle = 30 * time.Millisecond

// Start starts the bridge: it follows the lights at once and connects to
// the broker in the background (a broker away never delays the daemon),
// trying again with backoff and announcing everything again at each
// connection. It runs until Close, whatever ctx becomes: Close says
// offline to Home Assistant first.
func Start(ctx context.Context, cfg Config) (*Bridge, error) {
	u, err := ParseBroker("--ha-mqtt", cfg.Broker)
	if err != nil {
		return nil, err
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if err := ValidName(cfg.Node); err != nil {
		return nil, fmt.Errorf("ha: node: %w", err)
	}
	for _, l := range cfg.Lights {
		if err := ValidName(l); err != nil {
			return nil, err
		}
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Pass == nil {
		cfg.Pass = cfg.NC
	}
	b := &Bridge{cfg: cfg, broker: u, wire: wire.New(cfg.NC, wire.WithWho(messages.WhoHomeAssistant)),
		timers: map[string]*time.Timer{}, heard: map[string]bool{}, lights: map[string]*followed{}, pis: map[string]bool{},
		kept: map[string]keptFor{}, pisOwn: map[string]bool{}}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.client = mqtt.NewClient(b.options())
	if cfg.House == nil {
		for _, l := range cfg.Lights {
			if err := b.follow(l, where{page: cfg.Page}); err != nil {
				b.Close()
				return nil, err
			}
		}
	} else {
		b.before = map[string]bool{}
		for _, l := range b.recorded() {
			b.before[l] = true
		}
		b.spawn(func() {
			b.lookAtHouse() // the first look may wait for the hub's first
			t := time.NewTicker(houseEvery)
			defer t.Stop()
			for {
				select {
				case <-b.ctx.Done():
					return
				case <-t.C:
					b.lookAtHouse()
				}
			}
		})
	}
	b.spawn(b.connect)
	return b, nil
}

// keptFor is why a hub neither announces nor removes a light.
type keptFor int

const (
	theirs  keptFor = iota + 1 // its Pi publishes it to Home Assistant itself
	unheard                    // not heard since the hub started
)

// where is what discovery says of where a light runs: its page, and at
// a hub its Pi.
type where struct {
	page, pi string
}

// followed is a light the bridge announces.
type followed struct {
	where
	sub *nats.Subscription // its journal
	// effects and room are what discovery last said (effects nil: no
	// announce has read the light yet); state the state payload last
	// published; kelvin the color temperature Home Assistant last set;
	// unread whether the last read failed (said once); topics those of
	// Home Assistant's broker its sources listen on (broker: ha).
	effects []string
	room    string
	state   string
	kelvin  int
	unread  bool
	topics  []string
}

// follow starts following light's journal and counts it announced.
func (b *Bridge) follow(light string, w where) error {
	if err := ValidName(light); err != nil {
		return err
	}
	sub, err := b.cfg.NC.Subscribe(subject.Events(light), b.onEvent)
	if err != nil {
		return fmt.Errorf("ha: follow %s: %w", light, err)
	}
	b.mu.Lock()
	b.lights[light] = &followed{where: w, sub: sub}
	b.mu.Unlock()
	return nil
}

// current are the lights announced now, with where each runs.
func (b *Bridge) current() map[string]where {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]where, len(b.lights))
	for l, f := range b.lights {
		out[l] = f.where
	}
	return out
}

// with runs f on what the bridge knows of light, under its lock, if it
// still follows it; it reports whether it does.
func (b *Bridge) with(light string, f func(*followed)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.lights[light]
	if ok {
		f(l)
	}
	return ok
}

// lookAtHouse reads the house's directory: a light that joined is
// followed and announced, one that left is removed from Home Assistant,
// and each Pi's availability follows whether its lights answer. A light
// whose Pi publishes it to Home Assistant itself (its lumen up
// --ha-mqtt) is left to that Pi: announcing it here too would make one
// command two; so is a light the hub has not heard since it started,
// until it knows which it is.
func (b *Bridge) lookAtHouse() {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	dir, err := b.cfg.House.Lights(ctx)
	if err != nil {
		return
	}
	// One look at what is followed: where each light runs, and whether
	// an announce has read it.
	b.mu.Lock()
	now := make(map[string]where, len(b.lights))
	announced := make(map[string]bool, len(b.lights))
	for l, f := range b.lights {
		now[l], announced[l] = f.where, f.effects != nil
	}
	wasKept := maps.Clone(b.kept)
	b.mu.Unlock()
	seen := map[string]bool{}
	kept := map[string]keptFor{}
	own := map[string]string{} // Pi → the broker it publishes its lights on
	online := map[string]bool{}
	var joined, retry, handed []string
	for _, l := range dir {
		switch {
		case l.HA != "":
			kept[l.Light] = theirs
			own[l.Pi] = l.HA
		case !l.Online && len(l.States) == 0:
			kept[l.Light] = unheard
		}
		// A Pi is the hub's to say away or back when the hub announces
		// its lights, or did before it started (one away now is said to
		// be away); never when it publishes its own.
		if k := kept[l.Light]; k == 0 || k == unheard && b.before[l.Light] {
			online[l.Pi] = online[l.Pi] || l.Online
		}
		if kept[l.Light] != 0 {
			if _, following := now[l.Light]; following {
				handed = append(handed, l.Light)
			}
			continue
		}
		seen[l.Light] = true
		w := where{page: cmp.Or(l.Page, b.cfg.Page), pi: l.Pi}
		done := announced[l.Light]
		switch old, ok := now[l.Light]; {
		case ok && old == w && done, ok && old == w && !l.Online:
			continue
		case ok && old == w:
			retry = append(retry, l.Light) // its announce could not read it
			continue
		case ok:
			b.with(l.Light, func(f *followed) { f.where, f.effects = w, nil }) // moved to another Pi, or its page changed
		case b.follow(l.Light, w) != nil:
			continue
		}
		joined = append(joined, l.Light)
	}
	var left []string
	for l := range now {
		if !seen[l] && kept[l] == 0 {
			left = append(left, l)
		}
	}
	goneKept := false // a kept light left the house: it may be in the record
	for l := range wasKept {
		if _, ok := kept[l]; !ok && !seen[l] {
			goneKept = true
		}
	}
	b.mu.Lock()
	var told []string
	for _, pi := range slices.Sorted(maps.Keys(own)) {
		if b.pisOwn[pi] {
			continue
		}
		line := fmt.Sprintf("ha: Pi %s publishes its lights to Home Assistant itself (its --ha-mqtt, on %s); the hub leaves them to it", pi, own[pi])
		if own[pi] != b.broker.Host {
			// One broker may have two names: only the user can tell.
			line += fmt.Sprintf(" (the hub's broker is %s: if that is another broker, its Home Assistant does not see them)", b.broker.Host)
		}
		told = append(told, line)
	}
	b.pisOwn = make(map[string]bool, len(own))
	for pi := range own {
		b.pisOwn[pi] = true
	}
	b.kept = kept
	first := !b.looked
	b.looked = true
	for pi := range b.pis {
		if _, ok := online[pi]; !ok {
			delete(b.pis, pi) // it left, or publishes its availability itself
		}
	}
	b.mu.Unlock()
	for _, line := range told {
		b.cfg.Logf("%s", line)
	}
	// Its Pi announced it with its own availability and takes its
	// commands (stop following it, and keep its discovery, now the
	// Pi's), or it is away and the hub starting.
	for _, l := range handed {
		b.unfollow(l)
	}
	connected := b.client.IsConnectionOpen()
	for pi, on := range online {
		b.mu.Lock()
		was, ok := b.pis[pi]
		b.pis[pi] = on
		b.mu.Unlock()
		if connected && (!ok || was != on) {
			b.publish(AvailabilityTopic(pi), true, map[bool]string{true: "online", false: "offline"}[on])
		}
	}
	for _, l := range left {
		b.unfollow(l)
		if connected {
			b.clear(l)
		}
	}
	if connected {
		for _, l := range append(joined, retry...) {
			b.announce(l, true, true)
		}
		// The first look also tells which lights announced before the
		// hub started have left the house meanwhile.
		if first || goneKept || len(joined)+len(left)+len(handed) > 0 {
			for _, l := range b.forget() {
				if !slices.Contains(left, l) {
					b.clear(l)
				}
			}
		}
	}
}

// unfollow stops following a light that left.
func (b *Bridge) unfollow(light string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f := b.lights[light]; f != nil {
		_ = f.sub.Unsubscribe()
	}
	delete(b.lights, light)
}

// clear removes a light from Home Assistant: its retained discovery and
// state deleted.
func (b *Bridge) clear(light string) {
	for _, t := range []string{DiscoveryTopic(b.cfg.Prefix, light), Topic(light, "state")} {
		b.publish(t, true, []byte{}) // an empty retained message deletes it
	}
	b.cfg.Logf("ha: light %s no longer runs here: removed from Home Assistant", light)
}

func (b *Bridge) options() *mqtt.ClientOptions {
	o := mqtt.NewClientOptions()
	scheme := "tcp"
	if b.broker.Scheme == "mqtts" {
		scheme = "ssl"
		tc := b.cfg.TLS
		if tc == nil {
			tc = &cryptotls.Config{MinVersion: cryptotls.VersionTLS12}
		}
		o.SetTLSConfig(tc)
	}
	o.AddBroker(scheme + "://" + b.broker.Host)
	o.SetClientID("lumen-" + b.cfg.Node)
	o.SetUsername(b.cfg.User)
	o.SetPassword(b.cfg.Password)
	o.SetCleanSession(true)
	o.SetKeepAlive(30 * time.Second)
	o.SetConnectTimeout(10 * time.Second)
	o.SetWill(AvailabilityTopic(b.cfg.Node), "offline", 1, true)
	o.SetAutoReconnect(true)
	o.SetMaxReconnectInterval(30 * time.Second)
	o.SetOrderMatters(false) // handlers may publish
	o.SetOnConnectHandler(func(mqtt.Client) { b.spawn(b.online) })
	o.SetConnectionLostHandler(func(_ mqtt.Client, err error) {
		b.sayOnce(Problem{"lost", fmt.Sprintf("ha: lost the broker at %s (%v); reconnecting", b.broker.Host, err)})
	})
	return o
}

// connect makes the first connection, trying again with backoff until it
// succeeds or the bridge closes; the client reconnects by itself after.
func (b *Bridge) connect() {
	wait := time.Second
	for {
		t := b.client.Connect()
		t.Wait()
		err := t.Error()
		if err == nil {
			return
		}
		b.sayOnce(Explain(b.broker.Host, b.broker.Scheme == "mqtts", err))
		select {
		case <-b.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// Problem is why the broker could not be used, said once until it
// changes.
type Problem struct {
	Kind     string // credentials, tls, away or lost
	Sentence string
}

// Explain says in one sentence why the broker at host refused or could
// not be reached: the credentials, TLS (over tls, anything but nobody
// listening is the handshake's), or nobody answering.
func Explain(host string, tls bool, err error) Problem {
	msg := err.Error()
	var cert *cryptotls.CertificateVerificationError
	switch {
	case strings.Contains(msg, "not Authorized"), strings.Contains(msg, "bad user name or password"):
		return Problem{"credentials", fmt.Sprintf("ha: the broker at %s refused the user and password (give the right --ha-user and --ha-password); trying again", host)}
	case errors.As(err, &cert), strings.Contains(msg, "tls:"), strings.Contains(msg, "x509:"),
		tls && !strings.Contains(msg, "connection refused") && !strings.Contains(msg, "i/o timeout") && !strings.Contains(msg, "no such host"):
		return Problem{"tls", fmt.Sprintf("ha: TLS with the broker at %s failed (%v): check its certificate, and that it speaks TLS on that port (mqtts://, usually 8883); trying again", host, err)}
	}
	return Problem{"away", fmt.Sprintf("ha: no MQTT broker answers at %s (%v); Lumen runs on and tries again", host, err)}
}

func (b *Bridge) sayOnce(p Problem) {
	b.mu.Lock()
	same := b.said == p.Kind
	b.said = p.Kind
	b.mu.Unlock()
	if !same {
		b.cfg.Logf("%s", p.Sentence)
	}
}

// online runs at each connection: available, listening, and everything
// announced again (the broker may have lost what was retained).
func (b *Bridge) online() {
	b.mu.Lock()
	was := b.said
	b.said = ""
	b.mu.Unlock()
	if was != "" {
		b.cfg.Logf("ha: connected to the broker at %s", b.broker.Host)
	}
	b.publish(AvailabilityTopic(b.cfg.Node), true, "online")
	b.mu.Lock()
	clear(b.heard) // a clean session: subscribed to nothing yet
	b.mu.Unlock()
	b.client.Subscribe(topicRoot+"/+/set", 1, b.onCommand)
	b.client.Subscribe(b.cfg.Prefix+"/status", 1, func(_ mqtt.Client, m mqtt.Message) {
		if string(m.Payload()) == "online" { // Home Assistant (re)started
			b.spawn(b.announceAll)
		}
	})
	b.announceAll()
}

func (b *Bridge) publish(topic string, retained bool, payload any) {
	b.client.Publish(topic, 1, retained, payload)
}

// publishQuick publishes at QoS 0: a state, published often and again at
// each connection. At QoS 1 the broker's acknowledgements would hold the
// next command back: Mosquitto leaves Nagle's algorithm on by default,
// and its next packet waits for our delayed TCP acknowledgement of the
// last (about 40 ms).
func (b *Bridge) publishQuick(topic string, retained bool, payload any) {
	b.client.Publish(topic, 0, retained, payload)
}

// announceAll publishes every light's discovery and state, and clears
// the discovery of lights announced before that no longer run here.
func (b *Bridge) announceAll() {
	b.mu.Lock()
	pis := maps.Clone(b.pis)
	b.mu.Unlock()
	for pi, on := range pis {
		b.publish(AvailabilityTopic(pi), true, map[bool]string{true: "online", false: "offline"}[on])
	}
	for l := range b.current() {
		b.announce(l, true, true)
	}
	b.mu.Lock()
	unknown := b.cfg.House != nil && !b.looked
	b.mu.Unlock()
	if unknown {
		return // the hub's first look at the house clears what left it
	}
	for _, l := range b.forget() {
		b.clear(l)
	}
}

// announce publishes the light's discovery (when rediscover, or when
// its effects or room changed) and its state (when it changed, or when
// restate).
func (b *Bridge) announce(light string, rediscover, restate bool) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	g, err := b.wire.Light(light).Get(ctx)
	said := false
	b.with(light, func(f *followed) { said, f.unread = f.unread, err != nil })
	if err != nil {
		if !said {
			b.cfg.Logf("ha: read %s: %v (it is announced once it answers)", light, err)
		}
		return
	}
	names := make([]string, len(g.States))
	for i, s := range g.States {
		names[i] = s.Name
	}
	effects := Effects(names)
	b.listen(light, g.Sources)
	var (
		w       where
		changed bool
		kelvin  int
	)
	if !b.with(light, func(f *followed) {
		w, kelvin = f.where, f.kelvin
		changed = rediscover || !slices.Equal(f.effects, effects) || f.room != g.Room
		f.effects, f.room = effects, g.Room
	}) {
		return // it left meanwhile
	}
	if changed {
		l := Light{Name: light, Room: g.Room, States: names, Page: w.page, Node: b.cfg.Node, Version: b.cfg.Version}
		if w.pi != "" {
			l.Nodes = []string{w.pi}
		}
		topic, payload, err := Discovery(b.cfg.Prefix, l)
		if err != nil {
			b.cfg.Logf("%v", err)
			return
		}
		b.publish(topic, true, payload)
	}
	b.publishState(light, StateOf(g, kelvin), restate)
}

// listen subscribes to the topics of Home Assistant's broker the
// light's sources listen on (broker: ha), and unsubscribes from those no
// source of any light wants any more; each message is passed on to the
// lights at datasource.HASubject.
func (b *Bridge) listen(light string, sources []json.RawMessage) {
	var topics []string
	for _, raw := range sources {
		var d datasource.Def
		if d.UnmarshalJSON(raw) == nil && d.Kind() == datasource.TypeMQTT && d.Broker == datasource.BrokerHA {
			topics = append(topics, d.Topic)
		}
	}
	b.mu.Lock()
	if f := b.lights[light]; f != nil {
		f.topics = topics
	}
	want := map[string]bool{}
	for _, f := range b.lights {
		for _, t := range f.topics {
			want[t] = true
		}
	}
	var add, drop []string
	for t := range want {
		if !b.heard[t] {
			add = append(add, t)
			b.heard[t] = true
		}
	}
	for t := range b.heard {
		if !want[t] {
			drop = append(drop, t)
			delete(b.heard, t)
		}
	}
	b.mu.Unlock()
	for _, t := range add {
		b.client.Subscribe(t, 0, b.onMessage)
	}
	if len(drop) > 0 {
		b.client.Unsubscribe(drop...)
	}
}

// onMessage passes a message of Home Assistant's broker on to the
// sources that listen on its topic.
func (b *Bridge) onMessage(_ mqtt.Client, m mqtt.Message) {
	subj, err := datasource.TopicSubject(m.Topic())
	if err != nil || strings.ContainsAny(subj, "*>") {
		return // a topic no subject can name (a level with a dot, a space…)
	}
	_ = b.cfg.Pass.Publish(datasource.HASubject(subj), m.Payload())
}

// publishState publishes the light's state, retained, when it differs
// from the last (or when force).
func (b *Bridge) publishState(light string, s State, force bool) {
	p := s.Payload()
	same := false
	b.with(light, func(f *followed) { same, f.state = f.state == string(p), string(p) })
	if same && !force {
		return
	}
	b.publishQuick(Topic(light, "state"), true, p)
}

// onEvent follows a light's journal: a gesture of its button is an
// event; an output may have changed what Home Assistant shows.
func (b *Bridge) onEvent(m *nats.Msg) {
	light, dir, typ, ok := subject.Parse(m.Subject)
	if !ok {
		return
	}
	if dir == subject.DirIn && typ == messages.InFired {
		var env struct{ Data messages.InFiredData }
		if json.Unmarshal(m.Data, &env) == nil && (env.Data.Source == "button" || env.Data.Source == "web") {
			if g, ok := gestures[env.Data.Transition]; ok && b.client.IsConnectionOpen() {
				b.publish(Topic(light, "event"), false, fmt.Sprintf(`{"event_type":%q}`, g))
				b.publish(Topic(light, "button"), false, g)
			}
		}
		return
	}
	if dir != subject.DirOut {
		return
	}
	// The outputs of one input come together: read the light once after.
	b.mu.Lock()
	if t := b.timers[light]; t != nil {
		t.Reset(settle)
	} else {
		b.timers[light] = time.AfterFunc(settle, func() {
			b.mu.Lock()
			delete(b.timers, light)
			b.mu.Unlock()
			if b.client.IsConnectionOpen() {
				b.spawn(func() { b.announce(light, false, false) })
			}
		})
	}
	b.mu.Unlock()
}

// onCommand carries out a command of Home Assistant, then publishes the
// light's state (changed or not: Home Assistant shows what is true).
func (b *Bridge) onCommand(_ mqtt.Client, m mqtt.Message) {
	light := strings.TrimSuffix(strings.TrimPrefix(m.Topic(), topicRoot+"/"), "/set")
	if !b.with(light, func(*followed) {}) {
		return
	}
	payload := slices.Clone(m.Payload())
	b.spawn(func() {
		calls, err := Command(payload)
		if err != nil {
			b.cfg.Logf("ha: %s: a command from Home Assistant (%s): %v", light, clipPayload(payload), err)
		}
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		for _, c := range calls {
			if _, err := b.wire.Request(ctx, light, c.Verb, c.Body); err != nil {
				b.cfg.Logf("ha: %s: %s from Home Assistant: %v", light, c.Verb, err)
				break
			}
			if cr, ok := c.Body.(messages.ColorRequest); ok && cr.Kelvin != nil {
				b.with(light, func(f *followed) { f.kelvin = *cr.Kelvin })
			}
		}
		b.announce(light, false, true)
	})
}

func clipPayload(p []byte) string {
	if len(p) > 200 {
		return string(p[:200]) + "…"
	}
	return string(p)
}

// announced is what the bridge keeps in Data: the lights it announced.
type announced struct {
	Broker string   `json:"broker"`
	Prefix string   `json:"prefix"`
	Lights []string `json:"lights"`
}

const announcedFile = "ha.json"

// recorded are the lights Data's record says were announced to this
// broker and prefix.
func (b *Bridge) recorded() []string {
	if b.cfg.Data == "" {
		return nil
	}
	var was announced
	if data, err := os.ReadFile(filepath.Join(b.cfg.Data, announcedFile)); err == nil {
		_ = json.Unmarshal(data, &was)
	}
	if was.Broker != b.broker.Host || was.Prefix != b.cfg.Prefix {
		return nil
	}
	return was.Lights
}

// forget returns the lights announced before, to this broker and
// prefix, that do not run here now (at a hub: nor are kept), and records
// those that do, with those announced before and not heard since.
func (b *Bridge) forget() []string {
	if b.cfg.Data == "" {
		return nil
	}
	lights := slices.Sorted(maps.Keys(b.current()))
	b.mu.Lock()
	kept := maps.Clone(b.kept)
	b.mu.Unlock()
	var gone []string
	for _, l := range b.recorded() {
		switch {
		case slices.Contains(lights, l), kept[l] == theirs:
		case kept[l] == unheard:
			lights = append(lights, l) // still announced, to remove if it leaves
		default:
			gone = append(gone, l)
		}
	}
	slices.Sort(lights)
	name := filepath.Join(b.cfg.Data, announcedFile)
	now := announced{Broker: b.broker.Host, Prefix: b.cfg.Prefix, Lights: lights}
	if data, err := json.Marshal(now); err == nil {
		tmp := name + ".tmp"
		if os.WriteFile(tmp, data, 0o600) == nil {
			_ = os.Rename(tmp, name)
		}
	}
	return gone
}

// Close says offline, disconnects and stops following the lights.
func (b *Bridge) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cancel()
	b.mu.Lock()
	for _, f := range b.lights {
		_ = f.sub.Unsubscribe()
	}
	b.mu.Unlock()
	if b.client != nil {
		if b.client.IsConnectionOpen() {
			b.publish(AvailabilityTopic(b.cfg.Node), true, "offline")
		}
		b.client.Disconnect(250)
	}
	b.mu.Lock()
	for _, t := range b.timers {
		t.Stop()
	}
	b.mu.Unlock()
	b.wg.Wait()
}
