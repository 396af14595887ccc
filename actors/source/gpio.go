package source

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/nats/subject"
)

// gpio sources. The hardware actor owns the pins: it watches the pins the
// light's gpio sources name (it reads the same definitions), debounces
// them and publishes each change on subject.GPIO. The manager follows all
// of the light's pins from its start, and the changes of the edge a
// source wants are that source's results, handed to its actor and stored
// like a nats source's messages (one data input each), so replay never
// reads a pin.
//
// The device and the manager read a new definition independently. The
// device publishes a pin only once it has read it, and the configuration
// event that made it read is counted on the manager's connection before
// the pin's change arrives there: a change that arrives while the
// manager's copy is stale, or still being read, waits for the definitions
// instead of being lost.

// maxPendingGPIO bounds the changes that wait for the definitions.
const maxPendingGPIO = 64

type gpioMsg struct{ payload []byte }

// gpioState is the manager's subscription to the light's pins.
type gpioState struct {
	sub     *nats.Subscription
	pending [][]byte // changes that arrived while the definitions were read
	// unread: the last read of the definitions failed; a change then
	// goes to the sources that run rather than waiting for the light.
	unread  bool
	dropped bool // a change was dropped since pending last emptied (said once)
}

// followGPIO subscribes to every pin of the light.
func (m *Manager) followGPIO(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	sub, err := m.cfg.Conn.Subscribe(subject.AllGPIO(m.cfg.Light), func(msg *nats.Msg) { root.Send(self, &gpioMsg{payload: msg.Data}) })
	if err != nil {
		panic(fmt.Sprintf("source %s: follow the GPIO pins: %v", m.cfg.Light, err))
	}
	m.gpio.sub = sub
}

func (g *gpioState) stop() {
	if g.sub != nil {
		_ = g.sub.Unsubscribe()
	}
	*g = gpioState{}
}

// gpioEdge hands a pin's change to each gpio source that wants it. The
// other edge of a rising-only source is no result at all: it journals
// nothing.
func (m *Manager) gpioEdge(ctx actor.Context, payload []byte) {
	// A change that follows a configuration change this copy lacks (the
	// device read the new source's pin before the manager heard of it)
	// waits for a read made after it, like one that comes during a read.
	stale := m.defs.Stale() && !m.gpio.unread
	if !stale && !m.defs.Reading() {
		m.toSources(ctx, payload)
		return
	}
	if len(m.gpio.pending) < maxPendingGPIO {
		m.gpio.pending = append(m.gpio.pending, payload)
	} else if !m.gpio.dropped {
		m.gpio.dropped = true
		m.cfg.Logf("source %s: more than %d pin changes wait for the sources' definitions; later ones are dropped until they are read", m.cfg.Light, maxPendingGPIO)
	}
	if !m.defs.Reading() {
		m.load(ctx)
	}
}

// toSources hands a pin's change to the sources that run now.
func (m *Manager) toSources(ctx actor.Context, payload []byte) {
	for _, k := range m.kids {
		if datasource.GPIOMatch(k.def, payload) {
			ctx.Send(k.pid, &pushMsg{payload: payload})
		}
	}
}

// drainGPIO hands on the changes that waited for a read of the
// definitions that ended (loaded: it got them). After a failed read they
// go to the sources that run: the next configuration change reads again.
func (m *Manager) drainGPIO(ctx actor.Context, loaded bool) {
	m.gpio.unread = !loaded
	pending := m.gpio.pending
	m.gpio.pending, m.gpio.dropped = nil, false
	for _, p := range pending {
		m.gpioEdge(ctx, p)
	}
}
