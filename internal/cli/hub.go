package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/ha"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/web"
)

// saveRegistry saves the registry and waits for a running hub to take it.
func saveRegistry(ctx context.Context, data string, reg *house.Registry) error {
	if err := reg.Save(data); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return house.WaitApplied(ctx, data, reg.Generation)
}

// HubDoors are the doors of the whole house a hub may open: the page and
// API on HTTP (HOST:PORT; "" none), and Home Assistant through its MQTT
// broker (HA.URL "" none).
type HubDoors struct {
	HTTP    string
	HA      daemon.HAConfig
	Version string
}

// Hub runs lumen hub until ctx ends: the hub, and the doors of the
// whole house asked for.
func (t *Term) Hub(ctx context.Context, cfg house.HubConfig, doors HubDoors) error {
	httpAddr := doors.HTTP
	if err := doors.HA.Validate(); err != nil {
		return Usage(err)
	}
	cfg.Logf = func(format string, args ...any) {
		// The server's own lines: only its warnings and errors.
		if !strings.HasPrefix(format, "nats: ") || strings.HasPrefix(format, "nats: error: ") || strings.HasPrefix(format, "nats: warning: ") && !strings.Contains(format, "Plaintext passwords") {
			logTo(t.Stderr)(format, args...)
		}
	}
	h, err := house.NewHub(cfg)
	if err != nil {
		return Usage(err)
	}
	site, err := web.Listen("--http", httpAddr, cfg.User != "", cfg.Logf)
	if err != nil {
		return Usage(err)
	}
	var nc *nats.Conn
	var bridge *ha.Bridge
	defer func() { // the doors first, then their connection, then the hub
		if bridge != nil {
			bridge.Close()
		}
		site.Close()
		if nc != nil {
			nc.Close()
		}
		_ = h.Close()
	}()
	if err := h.Run(ctx); err != nil {
		return err
	}
	if site != nil || doors.HA.URL != "" {
		// The doors of the whole house, as a client of the hub.
		if nc, err = web.Dial(h.URL(), h.Door()...); err != nil {
			return err
		}
	}
	if site != nil {
		if err := site.Serve(web.Config{NC: nc, House: h, Hosts: cfg.SANs, User: cfg.User, Password: cfg.Password, Logf: cfg.Logf}); err != nil {
			return err
		}
	}
	if c := doors.HA; c.URL != "" {
		bridge, err = ha.Start(ctx, ha.Config{Broker: c.URL, User: c.User, Password: c.Password, Prefix: c.Prefix, Node: HubNode,
			Version: doors.Version, House: h, Page: site.Advertised(cfg.SANs), Data: house.Dir(cfg.Data), NC: nc, Logf: logTo(t.Stderr)})
		if err != nil {
			return err
		}
	}
	page := ""
	if site != nil {
		page = site.URL()
	}
	fmt.Fprintln(t.Stdout, describe.HubReady(h.URL(), h.LeafAddr(), page))
	<-ctx.Done()
	fmt.Fprintln(t.Stderr, describe.ShuttingDown())
	return nil // the deferred close, in order
}

// HubNode is the hub's name to Home Assistant's broker: its
// availability topic, beside each Pi's.
const HubNode = "lumen-hub"

// AddPi registers a Pi of the hub in data and writes its creds to out.
func (t *Term) AddPi(ctx context.Context, data, pi string, lights []string, out string) error {
	if out == "" {
		return Usage(fmt.Errorf("give --out FILE, where the Pi's credentials go"))
	}
	reg, err := house.LoadRegistry(data)
	if err != nil {
		return err
	}
	seed, err := reg.Add(pi, lights, time.Now())
	if err != nil {
		return Usage(err)
	}
	ca, err := house.EnsureCA(house.Dir(data))
	if err != nil {
		return err
	}
	if err := (house.Creds{Pi: pi, Lights: lights, Seed: seed, CA: string(ca.PEM)}).Write(out); err != nil {
		return err
	}
	if err := saveRegistry(ctx, data, &reg); err != nil {
		return err
	}
	fmt.Fprintln(t.Stdout, describe.PiAdded(pi, lights, out))
	return nil
}

// RemovePi removes a Pi from the hub in data.
func (t *Term) RemovePi(ctx context.Context, data, pi string) error {
	reg, err := house.LoadRegistry(data)
	if err != nil {
		return err
	}
	if err := reg.Remove(pi); err != nil {
		return err
	}
	if err := saveRegistry(ctx, data, &reg); err != nil {
		return err
	}
	fmt.Fprintln(t.Stdout, describe.PiRemoved(pi))
	return nil
}

// ListPis prints the Pis of the hub in data: their lights, status and lag.
func (t *Term) ListPis(data string) error {
	reg, err := house.LoadRegistry(data)
	if err != nil {
		return err
	}
	if len(reg.Pis) == 0 {
		fmt.Fprintln(t.Stdout, describe.NoPis())
		return nil
	}
	st, err := house.ReadStatus(data)
	if err != nil {
		return err
	}
	rows := make([]describe.PiRow, 0, len(reg.Pis))
	for _, p := range reg.Pis {
		s, ok := st.Pis[p.Name]
		rows = append(rows, describe.PiRow{Name: p.Name, Lights: p.Lights, Seen: ok, Connected: s.Connected, Since: s.Since,
			Lag: s.Lag, Stalled: s.Stalled, Refused: s.Refused, RefusedSince: s.RefusedSince})
	}
	return describe.Pis(t.Stdout, rows, broker.InUse(data), time.Now())
}
