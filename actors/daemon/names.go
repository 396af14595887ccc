package daemon

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// names is the agents' agent.House: the lights a request said to one of
// the daemon's lights may name, and their everyday verbs. The daemon's
// own lights are read with get, again after one's configuration changed
// (its Changes); in a house, the other Pis' lights come from the hub's
// directory, read again at most every houseEvery, and their verbs go
// through the hub (lumen.sys.house.<light>.cmd.<verb>).
type names struct {
	c       *wire.Client
	inHouse bool
	groups  func(light string) []string

	mu      sync.Mutex
	changes map[string]*wire.Changes // the daemon's lights
	gen     uint64                   // the sum of their changes when local was read
	local   []agent.Named
	house   []agent.Named
	houseAt time.Time
}

// houseEvery bounds how often the hub's directory is read, houseWait how
// long a request waits for it.
const (
	houseEvery = 5 * time.Second
	houseWait  = time.Second
)

func newNames(c *wire.Client, inHouse bool, groups func(string) []string) *names {
	return &names{c: c, inHouse: inHouse, groups: groups, changes: map[string]*wire.Changes{}}
}

// add counts light among the daemon's lights, changes being its
// configuration's.
func (n *names) add(light string, changes *wire.Changes) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.changes[light] = changes
	n.local = nil
}

// Lights is every light requests may name: the daemon's, then the
// house's others.
func (n *names) Lights(ctx context.Context) ([]agent.Named, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var gen uint64
	for _, c := range n.changes {
		gen += c.Gen()
	}
	if n.local == nil || gen != n.gen {
		local, all := n.readLocal(ctx)
		n.local, n.gen = local, gen
		if !all {
			n.local = nil // read again next time
		}
	}
	if n.inHouse && time.Since(n.houseAt) >= houseEvery {
		// A hub away or slow costs a request houseWait at most, once
		// every houseEvery: the house's lights are then those last read.
		n.houseAt = time.Now()
		hctx, cancel := context.WithTimeout(ctx, houseWait)
		if hl, err := n.c.HouseLights(hctx); err == nil {
			n.house = make([]agent.Named, 0, len(hl))
			for _, l := range hl {
				n.house = append(n.house, agent.Named{Light: l.Light, Room: l.Room, Aliases: l.Aliases, Groups: l.Groups, States: l.States})
			}
		}
		cancel()
	}
	out := slices.Clone(n.local)
	if n.local == nil {
		out, _ = n.readLocal(ctx)
	}
	for _, h := range n.house {
		if !slices.ContainsFunc(out, func(l agent.Named) bool { return l.Light == h.Light }) {
			out = append(out, h)
		}
	}
	return out, nil
}

// readLocal reads the daemon's lights' names and states; all is false
// when one did not answer (it may not serve yet).
func (n *names) readLocal(ctx context.Context) (out []agent.Named, all bool) {
	lights := make([]string, 0, len(n.changes))
	for l := range n.changes {
		lights = append(lights, l)
	}
	slices.Sort(lights)
	all = true
	for i, r := range n.c.RequestAll(ctx, lights, messages.VerbGet, nil) {
		g, err := wire.As[messages.GetReply](r)
		if err != nil {
			all = false
			continue
		}
		named := agent.Named{Light: lights[i], Room: g.Room, Aliases: g.Aliases, Groups: n.groups(lights[i])}
		for _, s := range g.States {
			named.States = append(named.States, s.Name)
		}
		out = append(out, named)
	}
	return out, all
}

// Command sends an everyday verb to light: the daemon's own on its
// subject, another Pi's through the hub.
func (n *names) Command(ctx context.Context, light, verb string, body []byte) ([]byte, error) {
	n.mu.Lock()
	_, mine := n.changes[light]
	n.mu.Unlock()
	if mine || !n.inHouse {
		return n.c.Request(ctx, light, verb, body)
	}
	return n.c.HouseRequest(ctx, light, verb, body)
}
