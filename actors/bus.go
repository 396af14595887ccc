package actors

// How the actors meet the bus: answering a request with an actor's
// reply, and hearing of a light's configuration changes.

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Answer sends msg to the actor pid and answers req with its reply
// (wire.Respond: a *messages.ErrorReply becomes the documented micro
// error, anything else is sent as JSON), after then, when set, has turned
// the reply into the answer. It waits off the subscription's goroutine so
// that one slow command never holds up the others. who names the actor
// in errors.
func Answer(req micro.Request, root *actor.RootContext, pid *actor.PID, msg any, timeout time.Duration, verb, who string, then func(any) any) {
	fut := root.RequestFuture(pid, msg, timeout)
	go func() {
		res, err := fut.Result()
		if err != nil {
			wire.RespondError(req, 500, fmt.Sprintf("%s: %s did not answer in %s (%v); check `lumen tail` and try again", verb, who, timeout, err))
			return
		}
		if then != nil {
			res = then(res)
		}
		wire.Respond(req, res)
	}()
}

// OnConfig sends msg to the actor of ctx whenever light journals a
// configuration change: the light's tools and sources read the model
// again then. Unsubscribe when the actor stops.
func OnConfig(ctx actor.Context, nc *nats.Conn, light string, msg any) (*nats.Subscription, error) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	sub, err := nc.Subscribe(subject.Out(light, messages.OutConfig), func(*nats.Msg) { root.Send(self, msg) })
	if err != nil {
		return nil, fmt.Errorf("actors: follow the configuration of %s: %w", light, err)
	}
	return sub, nil
}

// Changes counts a light's configuration changes as they reach a
// connection of the daemon (*wire.Changes): the count only grows.
type Changes interface{ Gen() uint64 }

// Reader reads what an actor follows of its light (the model, its sources,
// its tools) off the actor's goroutine, one read at a time: a read asked
// for while one runs is made again once that one is in, since it may
// predate the change that asked for it. Only the actor's goroutine uses
// it.
//
// With Changes set, it also tells whether the actor's copy may be staler
// than what the light has answered (Stale): a request that follows an
// answered change then waits for a read made after it.
type Reader struct {
	// Changes counts the light's configuration changes on the
	// connection its requests come on; nil: the copy is never known to
	// be stale.
	Changes Changes

	reading, again bool
	asked          uint64 // Changes' count when the running read began
	covered        uint64 // every change up to this count is in the copy
}

// Read runs read in its own goroutine, unless a read runs: then the next
// Done asks for another. read sends its result to the actor.
func (r *Reader) Read(read func()) {
	if r.reading {
		r.again = true
		return
	}
	r.reading = true
	if r.Changes != nil {
		r.asked = r.Changes.Gen()
	}
	go read()
}

// Reading reports whether a read runs.
func (r *Reader) Reading() bool { return r.reading }

// Done is told that a read's result is in, and whether the read got the
// light's answer (ok); it reports whether to read again.
func (r *Reader) Done(ok bool) (again bool) {
	r.reading = false
	if ok {
		r.covered = max(r.covered, r.asked)
	}
	again, r.again = r.again, false
	return again
}

// Stale reports whether the light may have answered a change that the
// copy lacks: a request should wait for the next read then (Read, and
// handle it once Done says no read follows).
func (r *Reader) Stale() bool {
	return r.Changes != nil && r.Changes.Gen() > r.covered
}

// Waiting holds, in the order they came, the requests that must wait for
// a Reader's next read: they came after a change the copy may lack, or
// behind requests that do.
type Waiting[T any] struct{ held []held[T] }

type held[T any] struct {
	req    T
	sender *actor.PID
}

// Hold queues req and reports true when it must wait: the copy is stale
// (load is called to read it again) or earlier requests wait already.
func (w *Waiting[T]) Hold(r *Reader, req T, sender *actor.PID, load func()) bool {
	switch {
	case r.Stale():
		w.Add(req, sender)
		load()
	case len(w.held) > 0:
		w.Add(req, sender)
	default:
		return false
	}
	return true
}

// Add queues req until the next Release.
func (w *Waiting[T]) Add(req T, sender *actor.PID) {
	w.held = append(w.held, held[T]{req: req, sender: sender})
}

// Release hands every held request to handle, in order, and empties the
// queue first (handle may hold one again).
func (w *Waiting[T]) Release(handle func(req T, sender *actor.PID)) {
	held := w.held
	w.held = nil
	for _, h := range held {
		handle(h.req, h.sender)
	}
}
