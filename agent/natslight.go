package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/subject"
)

// NATSLight sends the agent's commands to a light over NATS, exactly as
// `nats req lumen.<light>.cmd.<verb>` would.
type NATSLight struct {
	Conn  *nats.Conn
	Light string
}

// Command sends one command and returns the success reply's body.
func (l NATSLight) Command(ctx context.Context, verb string, body []byte) ([]byte, error) {
	m, err := l.Conn.RequestWithContext(ctx, subject.Cmd(l.Light, verb), body)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, &CommandError{Code: 503, Message: fmt.Sprintf("the light does not answer %s right now", verb)}
		}
		return nil, fmt.Errorf("agent: %s: %w", verb, err)
	}
	var status struct {
		OK    bool   `json:"ok"`
		Code  int    `json:"code"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &status); err != nil {
		return nil, fmt.Errorf("agent: %s: the reply is not JSON: %w", verb, err)
	}
	if !status.OK {
		return nil, &CommandError{Code: status.Code, Message: status.Error}
	}
	return m.Data, nil
}
