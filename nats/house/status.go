package house

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/subject"
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
	// yet: the Pi's journal's last sequence less the last the house
	// copied, measured every few seconds while the Pi is connected (kept
	// as last measured while it is away).
	Lag uint64 `json:"lag"`
	// Stalled is since when the copy of a connected Pi's journal has
	// not moved while it lags.
	Stalled time.Time `json:"stalled,omitzero"`
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
	house, err := h.b.JetStream().Stream(ctx, Stream)
	if err == nil {
		for _, src := range house.CachedInfo().Sources {
			if src.External != nil {
				lags[src.External.APIPrefix] = src.Lag
			}
		}
		h.measureLags(ctx, house)
	}
	now := time.Now().UTC()
	h.mu.Lock()
	st := Status{Updated: now, Pis: map[string]PiStatus{}}
	var joined []string
	for _, p := range h.reg.Pis {
		addr, on, other := h.linkOf(p, leafs)
		if on {
			h.addr[p.Name] = addr
		}
		if was, seen := h.online[p.Name]; !seen || was != on {
			h.online[p.Name], h.since[p.Name] = on, now
			if seen {
				h.cfg.Logf("hub: Pi %s %s", p.Name, map[bool]string{true: "connected", false: "disconnected"}[on])
			}
			if on {
				joined = append(joined, p.Name)
			}
		}
		ps := PiStatus{Connected: on, Since: h.since[p.Name], Addr: addr, Lag: lags[APIPrefix(p.Name)]}
		if m, ok := h.lags[p.Name]; ok {
			ps.Lag = m.lag
			if on && m.lag > 0 && now.Sub(m.moved) >= stallAfter {
				ps.Stalled = m.moved
			}
		}
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
	if len(joined) > 0 {
		if err := h.resync(ctx, reg, joined); err != nil {
			h.cfg.Logf("hub: Pis %s: %v; trying again", strings.Join(joined, ", "), err)
			// Seen as not connected yet, so that the next look retries.
			h.mu.Lock()
			for _, pi := range joined {
				delete(h.online, pi)
			}
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

// resync restarts the house stream's copy of Pis that just connected.
// The server retries a source whose Pi was away only after a wait (5 s
// and more, growing with each failure; after a hub restart always, as
// its first request leaves before the Pis can connect): removing the
// sources and adding them back starts the copies at once, from where the
// house stream stands (no gap, no duplicate). The Pis that connected
// since the last look go together: two updates of the stream, however
// many came back after a hub restart.
func (h *Hub) resync(ctx context.Context, reg Registry, pis []string) error {
	without := reg
	without.Pis = slices.DeleteFunc(slices.Clone(reg.Pis), func(p Pi) bool { return slices.Contains(pis, p.Name) })
	js := h.b.JetStream()
	if _, err := js.UpdateStream(ctx, StreamConfig(without, h.cfg.MaxBytes)); err != nil {
		return fmt.Errorf("restart the copy of its journal: %w", err)
	}
	if _, err := js.UpdateStream(ctx, StreamConfig(reg, h.cfg.MaxBytes)); err != nil {
		return fmt.Errorf("restart the copy of its journal: %w", err)
	}
	return nil
}

// A copy is measured every lagEvery, for at most lagBatch Pis at each
// look, and said stalled after stallAfter without moving while it lags.
const (
	lagEvery   = 2 * time.Second
	lagBatch   = 16
	stallAfter = 30 * time.Second
)

// measured is how far the house stream is behind a Pi.
type measured struct {
	lag    uint64
	copied uint64    // the last sequence of the Pi's journal the house has
	at     time.Time // measured
	moved  time.Time // copied last changed, or lag was 0
	said   bool      // the log said the copy stalled
}

// measureLags measures the connected Pis due for it.
func (h *Hub) measureLags(ctx context.Context, house jetstream.Stream) {
	now := time.Now().UTC()
	n := 0
	for _, p := range h.connected() {
		h.mu.Lock()
		m := h.lags[p.Name]
		h.mu.Unlock()
		if now.Sub(m.at) < lagEvery {
			continue
		}
		if n++; n > lagBatch {
			return
		}
		last, copied, err := h.copyOf(ctx, house, p)
		if err != nil {
			continue
		}
		m.at = now
		if copied != m.copied || last <= copied || m.moved.IsZero() {
			m.moved, m.said = now, false
		}
		m.copied, m.lag = copied, 0
		if last > copied {
			m.lag = last - copied
		}
		if m.lag > 0 && now.Sub(m.moved) >= stallAfter && !m.said {
			m.said = true
			h.cfg.Logf("hub: the house's copy of Pi %s's journal has not moved since %s, %d events behind: a Pi runs the same lumen as its hub (upgrade it if it is older), and 'lumen up' again on the Pi makes its house consumer again",
				p.Name, m.moved.Format(time.RFC3339), m.lag)
		}
		h.mu.Lock()
		h.lags[p.Name] = m
		h.mu.Unlock()
	}
}

// copyOf reads the last sequence of p's journal (its stream's info, through
// its JetStream domain) and the last of it the house stream has.
func (h *Hub) copyOf(ctx context.Context, house jetstream.Stream, p Pi) (last, copied uint64, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	pjs, err := jetstream.NewWithDomain(h.nc, p.Name)
	if err != nil {
		return 0, 0, err
	}
	s, err := pjs.Stream(ctx, subject.Stream)
	if err != nil {
		return 0, 0, err
	}
	for _, l := range p.Lights {
		m, err := house.GetLastMsgForSubject(ctx, subject.Events(l))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		} else if err != nil {
			return 0, 0, err
		}
		if seq, ok := copiedFrom(m.Header, p.Name); ok && seq > copied {
			copied = seq
		}
	}
	return s.CachedInfo().State.LastSeq, copied, nil
}
