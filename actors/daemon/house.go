package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
)

// A daemon given --hub and --creds is a Pi of a house: its server is a
// leaf node of the hub, in the Pi's own JetStream domain, so its lights
// keep working alone when the hub is gone; the hub's house stream
// sources its journal through a consumer the Pi keeps.

// ErrCreds is wrapped by Validate's errors about a Pi's creds.
var ErrCreds = errors.New("see 'lumen hub pi add'")

// validateHouse reads the creds of a Pi: the lights it runs must be
// theirs.
func (c *Config) validateHouse() error {
	switch {
	case c.Hub == "" && c.Creds == "":
		return nil
	case c.Creds == "":
		return errors.New("--hub needs --creds FILE: the file 'lumen hub pi add NAME --light …' wrote on the hub (creds: in lumen.yaml)")
	case c.Hub == "":
		return errors.New("--creds needs --hub tls://HOST:7422, the hub's leaf address (hub: in lumen.yaml)")
	}
	creds, err := house.ReadCreds(c.Creds)
	if err != nil {
		return fmt.Errorf("--creds: %w (%w)", err, ErrCreds)
	}
	if missing := creds.Allows(c.Lights); len(missing) > 0 {
		return fmt.Errorf("--light %s: the creds of Pi %s allow %s only; on the hub, 'lumen hub pi rm %s' then 'lumen hub pi add %s' with every light it runs (%w)",
			strings.Join(missing, ", "), creds.Pi, strings.Join(creds.Lights, ", "), creds.Pi, creds.Pi, ErrCreds)
	}
	c.creds = &creds
	return nil
}

// houseBroker sets a Pi's server to join the hub.
func (c *Config) houseBroker(bc *broker.Config) error {
	if c.creds == nil {
		return nil
	}
	cas, err := c.creds.CAPool()
	if err != nil {
		return err
	}
	inst, err := house.Instance(c.Data)
	if err != nil {
		return err
	}
	bc.Name, bc.Domain = house.ServerName(c.creds.Pi, inst), c.creds.Pi
	bc.Hub = &broker.HubLink{URL: c.Hub, Seed: c.creds.Seed, CAs: cas}
	return nil
}

// joinHouse makes the house consumer the hub sources the journal
// through, and watches the link to the hub.
func (d *Daemon) joinHouse(ctx context.Context) error {
	if d.cfg.creds == nil {
		return nil
	}
	js := d.broker.JetStream()
	if _, err := js.CreateOrUpdatePushConsumer(ctx, subject.Stream, house.ConsumerConfig(d.cfg.creds.Pi)); err != nil {
		return fmt.Errorf("daemon: the house consumer: %w", err)
	}
	// Its own connection: it asks the hub why it refuses the Pi.
	nc, err := d.broker.Connect(nats.Name("lumen-house-link"))
	if err != nil {
		return fmt.Errorf("daemon: connect in process: %w", err)
	}
	lctx, cancel := context.WithCancel(context.Background())
	d.stopLink = func() {
		cancel()
		nc.Close()
	}
	go d.watchLink(lctx, nc)
	return nil
}

// houseFloor is how far the house has the journal: its consumer's ack
// floor. Nil without a hub.
func (d *Daemon) houseFloor() func(context.Context) (uint64, error) {
	if d.cfg.creds == nil {
		return nil
	}
	js := d.broker.JetStream()
	return func(ctx context.Context) (uint64, error) {
		c, err := js.PushConsumer(ctx, subject.Stream, house.Consumer)
		if err != nil {
			return 0, err
		}
		info, err := c.Info(ctx)
		if err != nil {
			return 0, err
		}
		return info.AckFloor.Stream, nil
	}
}

// linkCheck is how often the link to the hub is looked at.
const linkCheck = 2 * time.Second

// watchLink says, once per change, whether the Pi is joined to its hub,
// and if not, why and what to do.
func (d *Daemon) watchLink(ctx context.Context, nc *nats.Conn) {
	said := "starting"
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(linkCheck):
		}
		on, why := d.broker.HubLinked()
		msg := "joined the house at " + d.cfg.Hub
		if !on {
			msg = fmt.Sprintf("not joined to the hub at %s (%s); the lights work alone, and it tries again every 2 s", d.cfg.Hub, linkAdvice(why))
		} else if refused := d.refusal(ctx, nc); refused != "" {
			msg = fmt.Sprintf("not joined to the hub at %s: %s; the lights work alone", d.cfg.Hub, refused)
		}
		if msg != said {
			d.cfg.Logf("%s", msg)
			said = msg
		}
	}
}

// refusal asks the hub why it refuses the Pi: only a refused Pi reaches
// the hub's answer, any other gets no responder.
func (d *Daemon) refusal(ctx context.Context, nc *nats.Conn) string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(ctx, house.WhySubject, []byte(d.cfg.creds.Pi))
	if err != nil {
		return ""
	}
	return string(m.Data)
}

// linkAdvice says what to do about the server's reason for a link down.
func linkAdvice(why string) string {
	lower := strings.ToLower(why)
	switch {
	case why == "":
		return "no answer yet: is lumen hub running there, and is --hub its leaf address?"
	case strings.Contains(lower, "authorization"):
		return "the hub refuses these creds: was the Pi removed ('lumen hub pi ls' on the hub), or are they another house's?"
	case strings.Contains(lower, "x509") || strings.Contains(lower, "certificate"):
		return "the hub's certificate is not the house CA's of these creds: is --hub the right hub, or does its certificate cover this name (lumen hub --san)?"
	case strings.Contains(lower, "refused") || strings.Contains(lower, "no route") || strings.Contains(lower, "timeout") || strings.Contains(lower, "no such host"):
		return "cannot reach it: is lumen hub running there, and is --hub its leaf address?"
	}
	return why
}
