package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/internal/atomicfile"
	"github.com/lumen-home/lumen/messages"
)

// runningMarker is a file in --data that exists while the daemon runs:
// found at a start, the last run ended without Close (a power cut, a
// SIGKILL, a crash), and each light shows what its power_on says.
const runningMarker = "running"

// markRunning records that the daemon runs, and reports whether the
// last run ended without Close.
func markRunning(data string) (unclean bool, err error) {
	path := filepath.Join(data, runningMarker)
	_, err = os.Stat(path)
	unclean = err == nil
	if err := atomicfile.WriteBytes(path, []byte("lumen runs here; removed when it stops cleanly\n"), 0o600); err != nil {
		return unclean, fmt.Errorf("daemon: cannot mark %s as running (%w)", data, err)
	}
	return unclean, nil
}

// markStopped records a clean stop.
func markStopped(data string) {
	_ = os.Remove(filepath.Join(data, runningMarker))
}

// powerOn moves a light that starts after an unclean stop to the state
// its power_on names (off, or a state), journaled by power_on like any
// input; restore, the default, leaves it as it was.
func (d *Daemon) powerOn(pid *actor.PID, name string) error {
	g, err := d.modelOf(pid)
	if err != nil {
		return err
	}
	to := messages.PowerOnTarget(g.PowerOn)
	if to == "" || to == g.State {
		return nil
	}
	if err := d.input(pid, messages.InState, messages.InStateData{Name: to}, messages.WhoPowerOn); err != nil {
		return err
	}
	d.cfg.Logf("light %s: started after an unclean stop: power_on %s, so %s (it was %s)", name, g.PowerOn, to, g.State)
	return nil
}

// modelOf asks a light's actor for its model, as get does, before the
// light serves.
func (d *Daemon) modelOf(pid *actor.PID) (*messages.GetReply, error) {
	res, err := d.sys.Root.RequestFuture(pid, &light.Get{}, 10*time.Second).Result()
	if err != nil {
		return nil, err
	}
	g, ok := res.(*messages.GetReply)
	if !ok {
		return nil, fmt.Errorf("unexpected answer %T", res)
	}
	return g, nil
}

// input gives a light's actor an input of the daemon's own, journaled by
// by, before the light serves; a refusal is the error.
func (d *Daemon) input(pid *actor.PID, typ string, data any, by string) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	res, err := d.sys.Root.RequestFuture(pid, &light.Command{Type: typ, Data: b, By: by}, 30*time.Second).Result()
	if err != nil {
		return err
	}
	if e, ok := res.(*messages.ErrorReply); ok {
		return errors.New(e.Error)
	}
	return nil
}
