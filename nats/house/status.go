package house

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/lumen-home/lumen/nats/broker"
)

// Status is what a running hub says of its Pis, kept in its data
// directory for `lumen hub pi ls`.
type Status struct {
	Updated time.Time           `json:"updated"`
	Pis     map[string]PiStatus `json:"pis"`
}

// PiStatus is one Pi as the hub sees it.
type PiStatus struct {
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since,omitzero"` // connected, or gone, since
	Addr      string    `json:"addr,omitempty"`
	// Lag is how many of the Pi's events the house stream does not have
	// yet, as the Pi's journal last told it.
	Lag uint64 `json:"lag"`
	// Refused is the address of a second machine that connects with the
	// Pi's creds, which the hub refuses, and since when.
	Refused      string    `json:"refused,omitempty"`
	RefusedSince time.Time `json:"refused_since,omitzero"`
}

// refusalGone is how long a refused machine may stay away before pi ls
// no longer shows it: it tries again every 2 s while it runs.
const refusalGone = 10 * time.Second

const statusFile = "status.json"

// ReadStatus reads the status a hub wrote; none yet is empty.
func ReadStatus(data string) (Status, error) {
	var s Status
	err := readJSON(filepath.Join(Dir(data), statusFile), &s)
	return s, err
}

// writeStatus writes which Pis are connected, since when, and how far
// the house stream lags behind each.
func (h *Hub) writeStatus(ctx context.Context) error {
	leafs, err := h.b.Leafs()
	if err != nil {
		return err
	}
	lags := map[string]uint64{}
	if s, err := h.b.JetStream().Stream(ctx, Stream); err == nil {
		for _, src := range s.CachedInfo().Sources {
			if src.External != nil {
				lags[src.External.APIPrefix] = src.Lag
			}
		}
	}
	now := time.Now().UTC()
	h.mu.Lock()
	st := Status{Updated: now, Pis: map[string]PiStatus{}}
	var joined []string
	for _, p := range h.reg.Pis {
		addr, on, other := h.linkOf(p, leafs)
		if was, seen := h.online[p.Name]; !seen || was != on {
			h.online[p.Name], h.since[p.Name] = on, now
			delete(h.known, p.Name) // a Pi back may run other groups
			if seen {
				h.cfg.Logf("hub: Pi %s %s", p.Name, map[bool]string{true: "connected", false: "disconnected"}[on])
			}
			if on {
				joined = append(joined, p.Name)
			}
		}
		ps := PiStatus{Connected: on, Since: h.since[p.Name], Addr: addr, Lag: lags[APIPrefix(p.Name)]}
		if r := h.refused[p.Name]; r != nil {
			if other != "" {
				r.seen, r.addr = now, other
			}
			if now.Sub(r.seen) > refusalGone {
				delete(h.refused, p.Name)
			} else {
				ps.Refused, ps.RefusedSince = r.addr, r.since
			}
		}
		st.Pis[p.Name] = ps
	}
	reg := h.reg
	h.mu.Unlock()
	for _, pi := range joined {
		if err := h.resync(ctx, reg, pi); err != nil {
			h.cfg.Logf("hub: Pi %s: %v; trying again", pi, err)
			// Seen as not connected yet, so that the next look retries.
			h.mu.Lock()
			delete(h.online, pi)
			h.mu.Unlock()
		}
	}
	if err := writeJSON(filepath.Join(Dir(h.cfg.Data), statusFile), st); err != nil {
		return err
	}
	return h.publish(ctx, reg, st)
}

// linkOf finds p's leaf connections: the address of the machine the hub
// keeps for it, if connected, and of another it refuses, if any.
func (h *Hub) linkOf(p Pi, leafs []broker.Leaf) (addr string, on bool, other string) {
	kept, bound := h.machines[p.PublicKey]
	for _, l := range leafs {
		pi, inst := splitName(l.Name)
		switch {
		case pi != p.Name:
		case inst == "" || !bound || inst == kept.Instance:
			addr, on = l.Addr, true
		default:
			other = l.Addr
		}
	}
	return addr, on, other
}

// resync restarts the house stream's copy of a Pi that just connected.
// The server retries a source whose Pi was away only after a wait (5 s
// and more, growing with each failure; after a hub restart always, as
// its first request leaves before the Pis can connect): removing the
// source and adding it back starts the copy at once, from where the
// house stream stands (no gap, no duplicate).
func (h *Hub) resync(ctx context.Context, reg Registry, pi string) error {
	without := reg
	without.Pis = slices.DeleteFunc(slices.Clone(reg.Pis), func(p Pi) bool { return p.Name == pi })
	js := h.b.JetStream()
	if _, err := js.UpdateStream(ctx, StreamConfig(without, h.cfg.MaxBytes)); err != nil {
		return fmt.Errorf("restart the copy of its journal: %w", err)
	}
	if _, err := js.UpdateStream(ctx, StreamConfig(reg, h.cfg.MaxBytes)); err != nil {
		return fmt.Errorf("restart the copy of its journal: %w", err)
	}
	return nil
}
