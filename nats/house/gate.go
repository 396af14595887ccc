package house

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lumen-home/lumen/internal/atomicfile"
	"github.com/lumen-home/lumen/nats/broker"
)

// One Pi, one machine. A Pi's server calls itself lumen-<pi>.<instance>,
// the instance being made once per data directory (kept with its
// journal). The hub keeps the first instance that logs in with a Pi's
// key, for good: the same Pi coming back (its link dropped, it
// restarted, the hub has not yet noticed its old connection is dead) is
// the same instance and is taken at once, nats-server dropping the stale
// connection; another machine with the same creds is another journal,
// and the hub refuses it, so the house never mixes two journals under
// one name. The refused machine is let in with no right but to ask why
// (WhySubject), so that its own log says it.

// WhySubject is where a Pi the hub refused asks why (the body is the
// Pi's name); only a refused connection may publish on it.
const WhySubject = "$LUMEN.house.why"

// ServerName is the name of a Pi's server: the Pi's and its data
// directory's instance, so the hub tells the same Pi from a second
// machine with the same creds.
func ServerName(pi, instance string) string { return "lumen-" + pi + "." + instance }

// splitName reads a Pi's server name; instance is "" for a Pi that does
// not give one (an older lumen).
func splitName(name string) (pi, instance string) {
	rest, _ := strings.CutPrefix(name, "lumen-")
	pi, instance, _ = strings.Cut(rest, ".")
	return pi, instance
}

const instanceFile = "house-instance"

// Instance is the instance of a Pi's data directory, made at its first
// start in a house.
func Instance(data string) (string, error) {
	path := filepath.Join(data, instanceFile)
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("house: %w", err)
	}
	raw := make([]byte, 6)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("house: make the instance: %w", err)
	}
	id := hex.EncodeToString(raw)
	if err := atomicfile.WriteBytes(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("house: %w", err)
	}
	return id, nil
}

// Machine is the instance the hub keeps for a Pi's key.
type Machine struct {
	Pi       string    `json:"pi"`
	Instance string    `json:"instance"`
	Addr     string    `json:"addr"` // it last connected from
	Since    time.Time `json:"since"`
}

// refusal is a second machine logging in as a Pi.
type refusal struct {
	addr  string
	since time.Time
	seen  time.Time // last seen connected
}

const machinesFile = "machines.json"

func loadMachines(data string) (map[string]Machine, error) {
	m := map[string]Machine{}
	err := readJSON(filepath.Join(Dir(data), machinesFile), &m)
	return m, err
}

func (h *Hub) saveMachines() error {
	return writeJSON(filepath.Join(Dir(h.cfg.Data), machinesFile), h.machines)
}

// Admit implements broker.LeafGate: a registered Pi's key, from the
// machine the hub keeps for it, gets its permissions; from another
// machine, only the right to ask why.
func (h *Hub) Admit(c broker.LeafConn) *broker.LeafUser {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.reg.byKey(c.Key)
	if p == nil {
		return nil
	}
	_, inst := splitName(c.Name)
	kept, ok := h.machines[c.Key]
	if inst == "" || ok && kept.Instance == inst {
		if ok && kept.Addr != c.Addr {
			kept.Addr = c.Addr
			h.machines[c.Key] = kept
			h.save(h.saveMachines())
		}
		return p.user()
	}
	if !ok {
		h.machines[c.Key] = Machine{Pi: p.Name, Instance: inst, Addr: c.Addr, Since: time.Now().UTC()}
		h.save(h.saveMachines())
		return p.user()
	}
	now := time.Now().UTC()
	r := h.refused[p.Name]
	if r == nil || r.addr != c.Addr {
		r = &refusal{addr: c.Addr, since: now}
		h.refused[p.Name] = r
	}
	r.seen = now
	if key := p.Name + "." + inst; !h.said[key] {
		h.said[key] = true
		h.cfg.Logf("pi %s connects from %s: each Pi needs its own creds: lumen hub pi add (the hub keeps the first, whose journal the house has, and refuses the second)",
			p.Name, bothAddrs(kept.Addr, c.Addr))
	}
	return &broker.LeafUser{Account: RefusedAccount, Permissions: &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{WhySubject}},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
	}}
}

// save logs a failure to keep the hub's machines: the hub keeps them in
// memory all the same.
func (h *Hub) save(err error) {
	if err != nil {
		h.cfg.Logf("hub: %v", err)
	}
}

// why is the sentence a refused Pi logs.
func (h *Hub) why(pi string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.reg.Find(pi)
	if p == nil {
		return ""
	}
	kept := h.machines[p.PublicKey]
	return fmt.Sprintf("the hub keeps another machine with the creds of Pi %s (it connects from %s) and refuses this one: each Pi needs its own creds; on the hub, 'lumen hub pi add NAME --light …' makes them",
		pi, hostOf(kept.Addr))
}

// bothAddrs names two addresses: their hosts, or with their ports when
// they are one host.
func bothAddrs(a, b string) string {
	if ha, hb := hostOf(a), hostOf(b); ha != hb {
		return ha + " and " + hb
	}
	return a + " and " + b
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// user is the Pi's user at the hub, in its own account.
func (p *Pi) user() *broker.LeafUser {
	return &broker.LeafUser{Account: accountName(*p), Permissions: Permissions(*p)}
}

// byKey returns the Pi whose key is key, or nil.
func (r *Registry) byKey(key string) *Pi {
	for i := range r.Pis {
		if r.Pis[i].PublicKey == key {
			return &r.Pis[i]
		}
	}
	return nil
}
