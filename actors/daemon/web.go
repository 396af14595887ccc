package daemon

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/web"
)

// serveWeb starts the daemon's HTTP door (--http) with its own
// connection to the broker, as an outside client, so the page and API
// have exactly a client's rights.
func (d *Daemon) serveWeb() error {
	if d.web == nil {
		return nil
	}
	opts := []nats.Option{nats.Name("lumen-http")}
	if d.cfg.User != "" {
		opts = append(opts, nats.UserInfo(d.cfg.User, d.cfg.Password))
	}
	nc, err := nats.Connect(d.broker.ClientURL(), opts...)
	if err != nil {
		return fmt.Errorf("daemon: the HTTP door's connection: %w", err)
	}
	d.webNC = nc
	return d.web.Serve(web.Config{NC: nc, Lights: d.cfg.Lights, Hosts: d.cfg.HTTPNames, Hooks: d.hooks, User: d.cfg.User, Password: d.cfg.Password, Logf: d.cfg.Logf})
}
