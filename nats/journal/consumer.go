package journal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of a durable consumer.
const (
	// DefaultMaxAckPending keeps one event in flight: a light applies its
	// inputs strictly in order, one at a time.
	DefaultMaxAckPending = 1
	// DefaultAckWait is how long an unacknowledged event waits before the
	// server delivers it again.
	DefaultAckWait = 30 * time.Second
)

// ConsumerOption tunes a durable consumer.
type ConsumerOption func(*jetstream.ConsumerConfig)

// MaxAckPending sets how many events may be delivered but not yet
// acknowledged (default DefaultMaxAckPending).
func MaxAckPending(n int) ConsumerOption {
	return func(c *jetstream.ConsumerConfig) { c.MaxAckPending = n }
}

// AckWait sets how long the server waits for an acknowledgement before
// delivering the event again (default DefaultAckWait).
func AckWait(d time.Duration) ConsumerOption {
	return func(c *jetstream.ConsumerConfig) { c.AckWait = d }
}

// Acker settles one delivered event.
type Acker interface {
	// Ack confirms the event was applied and waits until the server
	// has recorded it, so it is never delivered again.
	Ack(ctx context.Context) error
	// Nak asks for the event to be delivered again after delay.
	Nak(delay time.Duration) error
	// InProgress restarts the event's AckWait while work continues.
	InProgress() error
}

// Consumer delivers the events of a durable consumer in stream order.
// It has one owner: Next must not be called concurrently.
type Consumer struct {
	name string
	iter jetstream.MessagesContext
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
	cfg := jetstream.ConsumerConfig{
		Durable:       durable,
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: DefaultMaxAckPending,
		AckWait:       DefaultAckWait,
		FilterSubject: filter,
	}
	for _, o := range opts {
		o(&cfg)
	}
	cons, err := j.js.CreateOrUpdateConsumer(ctx, j.stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("journal: consumer %s on %q: %w", durable, filter, err)
	}
	// Redeliver now whatever a previous owner received but never acked.
	if _, err := j.js.ResetConsumer(ctx, j.stream, durable); err != nil {
		return nil, fmt.Errorf("journal: consumer %s: rewind to the first unacknowledged event: %w", durable, err)
	}
	iter, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("journal: consumer %s: %w", durable, err)
	}
	return &Consumer{name: durable, iter: iter}, nil
}

// Next blocks until the next event is delivered or ctx ends. After Stop it
// returns ErrClosed.
func (c *Consumer) Next(ctx context.Context) (Msg, Acker, error) {
	m, err := c.iter.Next(jetstream.NextContext(ctx))
	if err != nil {
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return Msg{}, nil, fmt.Errorf("%w: consumer %s: %w", ErrClosed, c.name, err)
		}
		return Msg{}, nil, fmt.Errorf("journal: consumer %s: next: %w", c.name, err)
	}
	md, err := m.Metadata()
	if err != nil {
		return Msg{}, nil, fmt.Errorf("journal: consumer %s: %w", c.name, err)
	}
	return fromJS(m, md), acker{m: m, consumer: c.name}, nil
}

// Stop ends fetching; a blocked Next returns ErrClosed. Events delivered
// but not acknowledged are delivered again to the next owner. The durable
// consumer and its position stay on the server.
func (c *Consumer) Stop() {
	c.iter.Stop()
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
