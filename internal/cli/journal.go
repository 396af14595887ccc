package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/repair"
	"github.com/lumen-home/lumen/nats/subject"
)

// events opens what a replay reads (a journal slice file, a stopped
// data dir, or the running daemon's journal) and settles t.Light: the
// slice's light, --light, or the journal's only light.
func (t *Term) events(ctx context.Context, data, file string) (past.Events, func(), error) {
	if file != "" {
		if data != "" {
			return nil, nil, Usage(errors.New("give -f FILE or --data DIR, not both"))
		}
		f, err := os.Open(file)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		s, err := journal.ReadSlice(f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		if t.Light != "" && t.Light != s.Light {
			return nil, nil, Usage(fmt.Errorf("%s holds light %s, not %s", file, s.Light, t.Light))
		}
		t.Light = s.Light
		return s, func() {}, nil
	}
	js, closeFn, err := t.openJournal(ctx, data)
	if err != nil {
		return nil, nil, err
	}
	j, err := house.OpenJournal(ctx, js)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	if t.Light = cmp.Or(t.Light, os.Getenv("LUMEN_LIGHT")); t.Light == "" {
		// The journal's only light, else say which there are.
		lights, err := j.Lights(ctx)
		if err == nil {
			switch len(lights) {
			case 0:
				err = errors.New("the journal has no light yet")
			case 1:
				t.Light = lights[0]
			default:
				err = Usage(fmt.Errorf("the journal has lights %s: say which with --light NAME", strings.Join(lights, ", ")))
			}
		}
		if err != nil {
			closeFn()
			return nil, nil, err
		}
	}
	if t.Light, err = subject.LightName(t.Light); err != nil {
		closeFn()
		return nil, nil, Usage(fmt.Errorf("--light: %w", err))
	}
	return j, closeFn, nil
}

// openJournal connects to the running daemon, or opens a stopped data dir
// with a private embedded server.
func (t *Term) openJournal(ctx context.Context, data string) (jetstream.JetStream, func(), error) {
	if data == "" {
		nc, err := t.Connect()
		if err != nil {
			return nil, nil, err
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return nil, nil, err
		}
		return js, nc.Close, nil
	}
	// A damaged journal would stall the read: say so, and what to do.
	if rep, err := repair.Check(data); err != nil {
		return nil, nil, err
	} else if rep.Damaged() {
		return nil, nil, errors.New(rep.String())
	}
	b, err := broker.Inspect(ctx, data)
	if err != nil {
		return nil, nil, err
	}
	return b.JetStream(), b.Shutdown, nil
}
