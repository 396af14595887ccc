package light

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/subject"
)

// Ask is how the light's companion actors (hardware, tools, sources) read
// it over NATS: it sends {} to lumen.<light>.cmd.<verb> and decodes the
// reply into out, retrying while the light does not answer (at start-up it
// may not serve yet), until ctx ends or after attempts tries (0: no
// limit). The fourth failure is logged once, as who.
func Ask(ctx context.Context, nc *nats.Conn, light, verb string, out any, attempts int, who string, logf func(string, ...any)) error {
	subj := subject.Cmd(light, verb)
	var err error
	for attempt := 0; attempts == 0 || attempt < attempts; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var m *nats.Msg
		m, err = nc.RequestWithContext(rctx, subj, []byte(`{}`))
		cancel()
		if err == nil {
			var status struct {
				OK bool `json:"ok"`
			}
			if err = json.Unmarshal(m.Data, &status); err == nil && !status.OK {
				err = fmt.Errorf("%s", m.Data)
			}
			if err == nil {
				if err = json.Unmarshal(m.Data, out); err == nil {
					return nil
				}
			}
		}
		if errors.Is(err, nats.ErrConnectionClosed) || ctx.Err() != nil {
			return err
		}
		if attempt == 3 {
			logf("%s: cannot read light %s's %s yet (%v); retrying", who, light, verb, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(min(attempt+1, 10)) * 100 * time.Millisecond):
		}
	}
	return fmt.Errorf("light %s did not answer %s: %w", light, verb, err)
}
