package house

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// The house's directory (subject.HouseLights): every light of the house,
// its Pi, room, aliases, groups and states, for a Pi whose words name a
// light of another. The hub answers from what it last looked up, and
// looks again in the background at most every refreshEvery, so that Pis
// asking often cost the lights nothing more.

const (
	// refreshEvery is how old the directory may be before a question
	// starts a new look.
	refreshEvery = 2 * time.Second
	// firstLook bounds how long the first question waits for the first
	// look; past it, it is answered with the registry alone.
	firstLook = 2 * time.Second
	// lookWait bounds one look: discovery, then each light's get.
	lookWait = 5 * time.Second
)

// directory is what the hub last learned of the house's lights.
type directory struct {
	mu     sync.Mutex
	known  map[string]heard // by light
	looked time.Time        // when the last look started
	busy   bool
	first  chan struct{} // closed when the first look ends
}

// heard is what a look learned of a light; running is whether it
// answered the last look.
type heard struct {
	pi      string
	room    string
	aliases []string
	groups  []string
	states  []string
	page    string // its daemon's page as bound (subject.MetaPage)
	ha      string // the broker its daemon publishes it to Home Assistant on (subject.MetaHA)
	running bool
	got     bool // its get answered: room, aliases and states are its own
}

// getOf is what the directory reads of a light's get reply: decoded on
// its own, so that keys the reply gains need nothing here.
type getOf struct {
	Room    string   `json:"room"`
	Aliases []string `json:"aliases"`
	States  []struct {
		Name string `json:"name"`
	} `json:"states"`
}

// answerLights answers a Pi's HouseLights with the directory, and only
// that: the request's body is not read.
func (h *Hub) answerLights(m *nats.Msg) {
	if m.Reply == "" {
		return
	}
	go func() {
		lights, _ := h.Lights(context.Background())
		b, err := json.Marshal(messages.HouseLightsReply{OK: true, Lights: lights})
		if err != nil {
			_ = wire.ReplyError(m, 500, "house: encode the directory: "+err.Error())
			return
		}
		_ = m.Respond(b)
	}()
}

// Lights is the house's directory: every light of the registry, sorted
// by light, with what the last look learned of it. The first call waits
// for the first look, at most firstLook; a later one answers at once and
// looks again in the background when the last look is old.
func (h *Hub) Lights(ctx context.Context) ([]messages.HouseLight, error) {
	select {
	case <-h.refresh():
	case <-time.After(firstLook):
	case <-ctx.Done():
		return nil, fmt.Errorf("house: the directory: %w", ctx.Err())
	}
	return h.houseLights(), nil
}

// refresh starts a look in the background unless one runs or the last
// began less than refreshEvery ago; it returns the channel closed when
// the first look ends.
func (h *Hub) refresh() <-chan struct{} {
	d := &h.dir
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.first == nil {
		d.first = make(chan struct{})
	}
	if d.busy || time.Since(d.looked) < refreshEvery {
		return d.first
	}
	d.busy, d.looked = true, time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), lookWait)
		defer cancel()
		found := h.look(ctx)
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.known == nil {
			d.known = map[string]heard{}
		}
		merge(d.known, found)
		d.busy = false
		select {
		case <-d.first:
		default:
			close(d.first)
		}
	}()
	return d.first
}

// merge takes what a look found into what is known: a light that did
// not answer keeps what was known of it, not running; one that answered
// discovery but not its get (its Pi going away) keeps what an earlier
// get said of it.
func merge(known, found map[string]heard) {
	for l, k := range known {
		k.running = false
		known[l] = k
	}
	for l, k := range found {
		if old, ok := known[l]; ok && !k.got && old.pi == k.pi {
			k.room, k.aliases, k.states = old.room, old.aliases, old.states
		}
		known[l] = k
	}
}

// look asks the connected Pis' lights, as the hub's clients see them
// (discovery passes only each Pi's own lights), for their groups and
// get replies.
func (h *Hub) look(ctx context.Context) map[string]heard {
	owners := map[string]string{}
	for _, p := range h.connected() {
		for _, l := range p.Lights {
			owners[l] = p.Name
		}
	}
	found := map[string]heard{}
	if len(owners) == 0 {
		return found
	}
	c := wire.New(h.nc, wire.WithTimeout(lookWait))
	running, err := c.Discover(ctx)
	if err != nil {
		return found
	}
	var names []string
	for _, r := range running {
		if pi := owners[r.Light]; pi != "" {
			found[r.Light] = heard{pi: pi, groups: r.Groups, states: []string{}, page: r.Page, ha: r.HA, running: true}
			names = append(names, r.Light)
		}
	}
	for _, r := range c.RequestAll(ctx, names, messages.VerbGet, nil) {
		k := found[r.Light]
		if g, err := wire.As[getOf](r); err == nil {
			k.got = true
			k.room, k.aliases = g.Room, g.Aliases
			for _, s := range g.States {
				k.states = append(k.states, s.Name)
			}
		}
		found[r.Light] = k
	}
	return found
}

// houseLights is the directory now: every light of the registry, with
// what the last looks learned of it, sorted by light.
func (h *Hub) houseLights() []messages.HouseLight {
	h.mu.Lock()
	type owned struct {
		pi     string
		online bool
		addr   string
	}
	lights := map[string]owned{}
	for _, p := range h.reg.Pis {
		for _, l := range p.Lights {
			lights[l] = owned{p.Name, h.online[p.Name], h.addr[p.Name]}
		}
	}
	h.mu.Unlock()
	h.dir.mu.Lock()
	defer h.dir.mu.Unlock()
	out := make([]messages.HouseLight, 0, len(lights))
	for l, o := range lights {
		hl := messages.HouseLight{Light: l, Pi: o.pi, States: []string{}}
		// What another Pi said of a light since moved is not this one's.
		if k, ok := h.dir.known[l]; ok && k.pi == o.pi {
			hl.Room, hl.Aliases, hl.Groups = k.room, slices.Clone(k.aliases), slices.Clone(k.groups)
			hl.States = slices.Clone(k.states)
			hl.Online = o.online && k.running
			hl.Page = pageSeen(k.page, o.addr)
			hl.HA = k.ha
		}
		out = append(out, hl)
	}
	slices.SortFunc(out, func(a, b messages.HouseLight) int { return strings.Compare(a.Light, b.Light) })
	return out
}

// pageSeen is a Pi's page as a browser beside the hub reaches it: an
// address bound on every interface (0.0.0.0, ::) becomes the address the
// hub sees the Pi connect from (from, host:port), and one bound on
// loopback is kept only when the Pi is on the hub's machine. "" when it
// cannot be reached from the hub.
func pageSeen(page, from string) string {
	u, err := url.Parse(page)
	if err != nil || page == "" {
		return ""
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !ip.IsUnspecified() && !ip.IsLoopback() {
		return page // a name (--http-name) or an address of the Pi
	}
	pi, _, err := net.SplitHostPort(from)
	if err != nil {
		return ""
	}
	piIP := net.ParseIP(pi)
	switch {
	case piIP == nil:
		return ""
	case ip.IsLoopback() && !piIP.IsLoopback():
		return "" // its page answers on its own machine only
	case ip.IsUnspecified():
		u.Host = net.JoinHostPort(pi, u.Port())
	}
	return u.String()
}
