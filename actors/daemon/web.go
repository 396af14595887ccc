package daemon

import (
	"github.com/lumen-home/lumen/web"
)

// serveWeb starts the daemon's HTTP door (--http) with its own
// connection to the broker.
func (d *Daemon) serveWeb() error {
	if d.web == nil {
		return nil
	}
	nc, err := web.Dial(d.broker.ClientURL(), d.broker.Door()...)
	if err != nil {
		return err
	}
	d.webNC = nc
	return d.web.Serve(web.Config{NC: nc, Lights: d.cfg.Lights, Hosts: d.cfg.HTTPNames, Hooks: d.hooks, Metrics: d.metrics.Handler(),
		User: d.cfg.User, Password: d.cfg.Password, Logf: d.cfg.Logf})
}
