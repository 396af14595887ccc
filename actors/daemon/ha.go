package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/ha"
)

// HAConfig connects the daemon's lights to Home Assistant through the
// user's MQTT broker (ha_mqtt: in lumen.yaml; lumen up --ha-mqtt …).
type HAConfig struct {
	URL      string `yaml:"url" doc:"the MQTT broker Home Assistant uses, mqtt://HOST:1883 or mqtts://HOST:8883: each light appears there by MQTT discovery (docs/home-assistant.md); off when not given"`
	User     string `yaml:"user" doc:"the broker's user name, if it asks for one"`
	Password string `yaml:"password" doc:"the broker's password for user (here rather than on the command line, out of the process list)"`
	Prefix   string `yaml:"prefix" doc:"Home Assistant's discovery prefix (default homeassistant)"`
}

var haPrefix = regexp.MustCompile(`^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$`)

// Validate checks c and fills its defaults (the prefix).
func (c *HAConfig) Validate() error {
	if c.URL == "" {
		if c.User != "" || c.Password != "" || c.Prefix != "" {
			return fmt.Errorf("--ha-user, --ha-password and --ha-prefix need --ha-mqtt mqtt://HOST:1883 (ha_mqtt: {url: …} in lumen.yaml)")
		}
		return nil
	}
	if _, err := ha.ParseBroker("--ha-mqtt", c.URL); err != nil {
		return err
	}
	if c.Password != "" && c.User == "" {
		return fmt.Errorf("--ha-password is given but --ha-user is not: give both (ha_mqtt: {user, password} in lumen.yaml)")
	}
	if c.Prefix == "" {
		c.Prefix = ha.DefaultPrefix
	}
	if !haPrefix.MatchString(c.Prefix) {
		return fmt.Errorf("--ha-prefix %q: give Home Assistant's discovery prefix, letters, digits, _ and - in levels separated by /, e.g. homeassistant", c.Prefix)
	}
	return nil
}

// node names this daemon to Home Assistant's broker: a Pi of a house by
// its name, else this machine's name and its data directory (two
// daemons of one machine are two nodes), the same at every start.
func (c *Config) node() string {
	if c.creds != nil {
		return c.creds.Pi
	}
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '-'
	}, host)
	dir, err := filepath.Abs(c.Data)
	if err != nil {
		dir = c.Data
	}
	sum := sha256.Sum256([]byte(dir))
	return strings.Trim(host, "-") + "-" + hex.EncodeToString(sum[:3])
}

// startHA starts the Home Assistant bridge, as an outside client of the
// broker (the rights the page has), when --ha-mqtt is given. It never
// waits for the MQTT broker.
func (d *Daemon) startHA(ctx context.Context) error {
	c := d.cfg.HA
	if c.URL == "" {
		return nil
	}
	nc, err := nats.Connect(d.broker.ClientURL(), append([]nats.Option{nats.Name("lumen-ha")}, d.broker.Door()...)...)
	if err != nil {
		return fmt.Errorf("daemon: connect the Home Assistant bridge: %w", err)
	}
	b, err := ha.Start(ctx, ha.Config{Broker: c.URL, User: c.User, Password: c.Password, Prefix: c.Prefix, Node: d.cfg.node(),
		Version: d.cfg.Version, Lights: d.cfg.Lights, Page: reachable(d.web.Advertised(d.cfg.HTTPNames)), Data: d.cfg.Data, NC: nc, Pass: d.nc, Logf: d.cfg.Logf})
	if err != nil {
		nc.Close()
		return err
	}
	d.ha, d.haNC = b, nc
	return nil
}

// stopHA says offline to Home Assistant and stops the bridge.
func (d *Daemon) stopHA() {
	if d.ha != nil {
		d.ha.Close()
		d.haNC.Close()
		d.ha, d.haNC = nil, nil
	}
}

// reachable is the page's address as Home Assistant's users can follow
// it: bound on every interface (0.0.0.0, ::), the machine's mDNS name
// (HOST.local, which the page answers to) stands for the address.
func reachable(page string) string {
	u, err := url.Parse(page)
	if err != nil || page == "" {
		return page
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		if host, err := os.Hostname(); err == nil && host != "" {
			u.Host = net.JoinHostPort(strings.ToLower(host)+".local", u.Port())
		}
	}
	return u.String()
}
