package journal

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of a durable consumer.
const (
	// DefaultMaxAckPending keeps one event in flight: the owner applies
	// events strictly in order, one at a time.
	DefaultMaxAckPending = 1
	// DefaultAckWait is how long an unacknowledged event waits before the
	// server delivers it again.
	DefaultAckWait = 30 * time.Second
)

// ConsumerOption tunes a durable consumer.
type ConsumerOption func(*consumerConfig)

type consumerConfig struct {
	js      jetstream.ConsumerConfig
	startAt uint64
}

// MaxAckPending sets how many events may be delivered but not yet
// acknowledged (default DefaultMaxAckPending). Delivery stays in stream
// order; more than one lets the owner take events in batches.
func MaxAckPending(n int) ConsumerOption {
	return func(c *consumerConfig) { c.js.MaxAckPending = n }
}

// AckWait sets how long the server waits for an acknowledgement before
// delivering the event again (default DefaultAckWait).
func AckWait(d time.Duration) ConsumerOption {
	return func(c *consumerConfig) { c.js.AckWait = d }
}

// AckAll makes acknowledging an event acknowledge every event delivered
// before it too, so a batch is settled with one ack of its last event.
func AckAll() ConsumerOption {
	return func(c *consumerConfig) { c.js.AckPolicy = jetstream.AckAllPolicy }
}

// StartAt (re)creates the durable consumer so that it delivers from stream
// sequence seq, for an owner that knows from the journal itself how far it
// got. The consumer's previous position is discarded.
func StartAt(seq uint64) ConsumerOption {
	return func(c *consumerConfig) { c.startAt = max(seq, 1) }
}

// Acker settles one delivered event.
type Acker interface {
	// Ack confirms the event was applied and waits until the server
	// has recorded it, so it is never delivered again.
	Ack(ctx context.Context) error
	// AckNoWait confirms the event without waiting for the server: a
	// lost acknowledgement means a redelivery, which the owner must
	// recognize (by sequence) and skip.
	AckNoWait() error
	// Nak asks for the event to be delivered again after delay.
	Nak(delay time.Duration) error
	// InProgress restarts the event's AckWait while work continues.
	InProgress() error
}

// Delivery is one delivered event and what settles it.
type Delivery struct {
	Msg
	Acker
}

// Consumer delivers the events of a durable consumer in stream order.
// It has one owner: Next and Batch must not be called concurrently.
type Consumer struct {
	name string
	cc   jetstream.ConsumeContext
	msgs chan jetstream.Msg
	stop chan struct{}
	// why is the error that ended consuming (e.g. the consumer was
	// deleted), reported by Next once the buffered events are taken.
	why atomic.Pointer[error]
}

// Consumer creates or updates the durable pull consumer named durable on
// the events matching filter (AckExplicit, DeliverAll, MaxAckPending 1,
// AckWait 30s unless changed by opts) and starts fetching.
//
// The consumer is assumed to have a single owner: opening it rewinds
// delivery to the first unacknowledged event, so an owner restarted after
// a crash resumes there at once instead of after AckWait. The rewind
// restarts Msg.NumDelivered at 1: recognize an event applied before the
// crash by what the journal holds (its outputs' cause), not by the count.
func (j *Journal) Consumer(ctx context.Context, durable, filter string, opts ...ConsumerOption) (*Consumer, error) {
	cfg := consumerConfig{js: jetstream.ConsumerConfig{
		Durable:       durable,
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: DefaultMaxAckPending,
		AckWait:       DefaultAckWait,
		FilterSubject: filter,
	}}
	for _, o := range opts {
		o(&cfg)
	}
	var (
		cons jetstream.Consumer
		err  error
	)
	if cfg.startAt > 0 {
		// A start sequence cannot be changed on an existing consumer:
		// replace it.
		if err := j.js.DeleteConsumer(ctx, j.stream, durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("journal: consumer %s: replace: %w", durable, err)
		}
		cfg.js.DeliverPolicy, cfg.js.OptStartSeq = jetstream.DeliverByStartSequencePolicy, cfg.startAt
		cons, err = j.js.CreateConsumer(ctx, j.stream, cfg.js)
	} else {
		cons, err = j.js.CreateOrUpdateConsumer(ctx, j.stream, cfg.js)
		if err == nil {
			// Redeliver now whatever a previous owner received but never acked.
			if _, err = j.js.ResetConsumer(ctx, j.stream, durable); err != nil {
				err = fmt.Errorf("rewind to the first unacknowledged event: %w", err)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("journal: consumer %s on %q: %w", durable, filter, err)
	}
	c := &Consumer{name: durable, msgs: make(chan jetstream.Msg, min(max(cfg.js.MaxAckPending, 1), 4096)), stop: make(chan struct{})}
	// Consume hands over messages one at a time, in order, from a single
	// goroutine; the channel lets Batch take whatever has arrived.
	c.cc, err = cons.Consume(func(m jetstream.Msg) {
		select {
		case c.msgs <- m:
		case <-c.stop:
		}
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		// Missed heartbeats and reconnects are retried by the client;
		// a terminal error (the consumer was deleted) stops consuming and
		// Next reports it.
		c.why.Store(&err)
	}))
	if err != nil {
		return nil, fmt.Errorf("journal: consumer %s: %w", durable, err)
	}
	return c, nil
}

// Next blocks until the next event is delivered or ctx ends. After Stop it
// returns ErrClosed.
func (c *Consumer) Next(ctx context.Context) (Msg, Acker, error) {
	select {
	case <-c.stop:
		return Msg{}, nil, fmt.Errorf("%w: consumer %s stopped", ErrClosed, c.name)
	default:
	}
	select {
	case m := <-c.msgs:
		d, err := c.delivery(m)
		return d.Msg, d.Acker, err
	case <-c.stop:
		return Msg{}, nil, fmt.Errorf("%w: consumer %s stopped", ErrClosed, c.name)
	case <-c.cc.Closed():
		why := errors.New("the connection closed")
		if p := c.why.Load(); p != nil {
			why = *p
		}
		return Msg{}, nil, fmt.Errorf("%w: consumer %s stopped: %w", ErrClosed, c.name, why)
	case <-ctx.Done():
		return Msg{}, nil, fmt.Errorf("journal: consumer %s: next: %w", c.name, ctx.Err())
	}
}

// Batch blocks until at least one event is delivered, then returns it with
// every event already delivered behind it, up to max, in stream order. It
// appends to buf, which may be nil.
func (c *Consumer) Batch(ctx context.Context, max int, buf []Delivery) ([]Delivery, error) {
	m, a, err := c.Next(ctx)
	if err != nil {
		return buf, err
	}
	buf = append(buf, Delivery{m, a})
	for len(buf) < max {
		select {
		case jm := <-c.msgs:
			d, err := c.delivery(jm)
			if err != nil {
				return buf, err
			}
			buf = append(buf, d)
		default:
			return buf, nil
		}
	}
	return buf, nil
}

func (c *Consumer) delivery(m jetstream.Msg) (Delivery, error) {
	md, err := m.Metadata()
	if err != nil {
		return Delivery{}, fmt.Errorf("journal: consumer %s: %w", c.name, err)
	}
	return Delivery{fromJS(m, md), acker{m: m, consumer: c.name}}, nil
}

// Stop ends fetching; a blocked Next returns ErrClosed. Events delivered
// but not acknowledged are delivered again to the next owner. The durable
// consumer and its position stay on the server.
func (c *Consumer) Stop() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
		c.cc.Stop()
	}
}

// acker implements Acker for one delivered message.
type acker struct {
	m        jetstream.Msg
	consumer string
}

func (a acker) Ack(ctx context.Context) error {
	// DoubleAck waits for the server's confirmation: an ack lost on the
	// way would otherwise mean a redelivery after AckWait.
	if err := a.m.DoubleAck(ctx); err != nil {
		return fmt.Errorf("journal: consumer %s: ack: %w", a.consumer, err)
	}
	return nil
}

func (a acker) AckNoWait() error {
	if err := a.m.Ack(); err != nil {
		return fmt.Errorf("journal: consumer %s: ack: %w", a.consumer, err)
	}
	return nil
}

func (a acker) Nak(delay time.Duration) error {
	if err := a.m.NakWithDelay(delay); err != nil {
		return fmt.Errorf("journal: consumer %s: nak: %w", a.consumer, err)
	}
	return nil
}

func (a acker) InProgress() error {
	if err := a.m.InProgress(); err != nil {
		return fmt.Errorf("journal: consumer %s: in progress: %w", a.consumer, err)
	}
	return nil
}

// DeleteConsumer removes the durable consumer and its position. It returns
// ErrNotFound when there is no such consumer.
func (j *Journal) DeleteConsumer(ctx context.Context, durable string) error {
	if err := j.js.DeleteConsumer(ctx, j.stream, durable); err != nil {
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("%w: consumer %s: %w", ErrNotFound, durable, err)
		}
		return fmt.Errorf("journal: delete consumer %s: %w", durable, err)
	}
	return nil
}
