package actors

import "github.com/asynkron/protoactor-go/actor"

// LoopDispatcher returns a dispatcher that runs one actor's mailbox on a
// single long-lived goroutine, for actors that get a steady stream of
// messages (a light, its hardware actor). The default dispatcher starts a
// goroutine each time an idle mailbox gets a message; a light's machine
// runs JavaScript deep in goja, and growing a fresh goroutine's stack to
// that depth again for every command or delivered batch costs more than
// the machine's own work on it.
//
// Use one per actor (its Props): the goroutine lives as long as the
// process, like the lights themselves.
func LoopDispatcher() actor.Dispatcher {
	d := loopDispatcher{work: make(chan func(), 16)}
	go func() {
		for fn := range d.work {
			fn()
		}
	}()
	return d
}

type loopDispatcher struct {
	work chan func()
}

// Schedule is called when the mailbox turns from idle to running, so at
// most one fn waits while another runs.
func (d loopDispatcher) Schedule(fn func()) { d.work <- fn }

// Throughput is how many messages the mailbox handles before yielding.
func (d loopDispatcher) Throughput() int { return 300 }
