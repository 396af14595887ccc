package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/nats/subject"
)

// Running is a light that answers on the server, as discovery sees it.
type Running struct {
	Light  string
	Groups []string // the groups it answers for (lumen.group.<g>.cmd)
	Page   string   // its daemon's page as bound (subject.MetaPage); "": none
	HA     string   // the broker its daemon publishes it to Home Assistant on (subject.MetaHA); "": none
}

// quiet is how long discovery waits for one more light after the last
// one answered: every instance answers at once, from the same server.
const quiet = 200 * time.Millisecond

// firstAnswer bounds the wait for the first light: none answering in
// that long means none runs (a busy Pi answers in milliseconds).
const firstAnswer = 2 * time.Second

// Discover asks every running light's service instance for its info
// ($SRV.INFO.lumen) and returns them by name. It waits until no light
// has answered for a moment, or ctx ends.
func (c *Client) Discover(ctx context.Context) ([]Running, error) {
	subj, err := micro.ControlSubject(micro.InfoVerb, subject.Service, "")
	if err != nil {
		return nil, fmt.Errorf("wire: discover: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	inbox := c.nc.NewRespInbox()
	replies := make(chan *nats.Msg, 64)
	sub, err := c.nc.ChanSubscribe(inbox, replies)
	if err != nil {
		return nil, fmt.Errorf("wire: discover: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := c.nc.PublishRequest(subj, inbox, nil); err != nil {
		return nil, fmt.Errorf("wire: discover: %w", err)
	}
	seen := map[string]Running{}
	wait := min(c.timeout, firstAnswer)
	for {
		select {
		case m := <-replies:
			var info micro.Info
			if json.Unmarshal(m.Data, &info) != nil || info.Metadata[subject.MetaLight] == "" {
				continue
			}
			seen[info.Metadata[subject.MetaLight]] = running(info)
			wait = quiet
		case <-time.After(wait):
			return sorted(seen), nil
		case <-ctx.Done():
			if len(seen) > 0 || errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return sorted(seen), nil
			}
			return nil, ctx.Err()
		}
	}
}

func running(info micro.Info) Running {
	r := Running{Light: info.Metadata[subject.MetaLight], Page: info.Metadata[subject.MetaPage], HA: info.Metadata[subject.MetaHA]}
	for _, e := range info.Endpoints {
		if g, ok := groupOf(e.Subject); ok && !slices.Contains(r.Groups, g) {
			r.Groups = append(r.Groups, g)
		}
	}
	slices.Sort(r.Groups)
	return r
}

// groupOf returns g for a subject lumen.group.<g>.cmd.<verb>.
func groupOf(subj string) (string, bool) {
	prefix, suffix, _ := strings.Cut(subject.GroupCmdPrefix("\x00"), "\x00")
	rest, ok := strings.CutPrefix(subj, prefix)
	if !ok {
		return "", false
	}
	g, _, ok := strings.Cut(rest, suffix+".")
	return g, ok && g != ""
}

func sorted(seen map[string]Running) []Running {
	out := make([]Running, 0, len(seen))
	for _, r := range seen {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Running) int { return strings.Compare(a.Light, b.Light) })
	return out
}

// Reply is one light's answer to a command sent to several.
type Reply struct {
	Light string
	Body  []byte // the body of a success
	Err   error  // a refusal (*Error), or no answer
}

// RequestAll sends verb with body to each of lights at once, and returns
// their answers in the order of lights.
func (c *Client) RequestAll(ctx context.Context, lights []string, verb string, body any) []Reply {
	out := make([]Reply, len(lights))
	var wg sync.WaitGroup
	for i, l := range lights {
		wg.Go(func() {
			b, err := c.Request(ctx, l, verb, body)
			out[i] = Reply{Light: l, Body: b, Err: err}
		})
	}
	wg.Wait()
	return out
}
