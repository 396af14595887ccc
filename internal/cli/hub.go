package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"

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

// Hub runs lumen hub until ctx ends: the hub, and with httpAddr the page
// and API of the whole house.
func (t *Term) Hub(ctx context.Context, cfg house.HubConfig, httpAddr string) error {
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
	defer func() { // the page first, then its connection, then the hub
		site.Close()
		if nc != nil {
			nc.Close()
		}
		_ = h.Close()
	}()
	if err := h.Run(ctx); err != nil {
		return err
	}
	if site != nil {
		// The page and API of the whole house, as a client of the hub.
		if nc, err = web.Dial(h.URL(), h.Door()...); err != nil {
			return err
		}
		if err := site.Serve(web.Config{NC: nc, Hosts: cfg.SANs, User: cfg.User, Password: cfg.Password, Logf: cfg.Logf}); err != nil {
			return err
		}
	}
	fmt.Fprintf(t.Stdout, "lumen: hub ready %s leaf %s\n", h.URL(), h.LeafAddr())
	if site != nil {
		fmt.Fprintf(t.Stdout, "lumen: page %s/\n", site.URL())
	}
	<-ctx.Done()
	fmt.Fprintln(t.Stderr, "lumen: shutting down")
	return nil // the deferred close, in order
}

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
	fmt.Fprintf(t.Stdout, "registered Pi %s (lights %s); its credentials are in %s: copy them to the Pi and run\n  lumen up --light %s --hub tls://HUB:7422 --creds %s\n",
		pi, strings.Join(lights, ", "), out, strings.Join(lights, " --light "), filepath.Base(out))
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
	fmt.Fprintf(t.Stdout, "removed Pi %s: it can no longer connect; its history stays in the house stream\n", pi)
	return nil
}

// ListPis prints the Pis of the hub in data: their lights, status and lag.
func (t *Term) ListPis(data string) error {
	reg, err := house.LoadRegistry(data)
	if err != nil {
		return err
	}
	if len(reg.Pis) == 0 {
		fmt.Fprintln(t.Stdout, "no Pi yet: 'lumen hub pi add NAME --light LIGHT --out FILE' registers one")
		return nil
	}
	st, err := house.ReadStatus(data)
	if err != nil {
		return err
	}
	running, now := broker.InUse(data), time.Now()
	w := tabwriter.NewWriter(t.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PI\tLIGHTS\tSTATUS\tLAG")
	for _, p := range reg.Pis {
		s, ok := st.Pis[p.Name]
		status, lag := "hub not running", "-"
		switch {
		case !running:
		case !ok:
			status = "registered, not seen yet"
		case s.Connected:
			status, lag = "connected since "+describe.Ago(s.Since, now), fmt.Sprint(s.Lag)
		default:
			status, lag = "disconnected since "+describe.Ago(s.Since, now), fmt.Sprint(s.Lag)
		}
		if running && s.Connected && !s.Stalled.IsZero() {
			lag += " (copy stalled since " + describe.Ago(s.Stalled, now) + ")"
		}
		if running && s.Refused != "" {
			status += fmt.Sprintf("; refused a second Pi from %s since %s: each Pi needs its own creds (lumen hub pi add)", s.Refused, describe.Ago(s.RefusedSince, now))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.Name, strings.Join(p.Lights, ","), status, lag)
	}
	return w.Flush()
}
