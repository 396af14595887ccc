package house

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/subject"
)

// StreamConfig is the house stream: no subjects of its own (live events
// would then be stored twice), one source per Pi, through the push
// consumer the Pi keeps on its journal.
func StreamConfig(r Registry, maxBytes int64) jetstream.StreamConfig {
	cfg := jetstream.StreamConfig{
		Name:        Stream,
		Description: "Lumen house: every Pi's journal, sourced",
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		MaxMsgs:     -1,
		MaxBytes:    maxBytes,
		// Past the budget the oldest events go: the Pis keep the truth.
		Discard:     jetstream.DiscardOld,
		AllowDirect: true,
	}
	for _, p := range r.Pis {
		cfg.Sources = append(cfg.Sources, &jetstream.StreamSource{
			Name:     subject.Stream,
			External: &jetstream.ExternalStream{APIPrefix: APIPrefix(p.Name)},
			Consumer: &jetstream.StreamConsumerSource{Name: Consumer, DeliverSubject: DeliverSubject(p.Name)},
		})
	}
	return cfg
}

// ConsumerConfig is the house consumer a Pi keeps on its LUMEN stream:
// the hub resets it to where it has stored and acknowledges by flow
// control, so its ack floor says how far the house has the journal.
// The consumer pauses at MaxAckPending until the hub's flow-control
// reply: a window of 1,000 made catching up a third slower than a raw
// source (BenchmarkHouseCatchUp); 65,536 costs a few MB at most.
func ConsumerConfig(pi string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:        Consumer,
		Description:    "the house stream's copy of this journal (lumen hub)",
		DeliverSubject: DeliverSubject(pi),
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		AckPolicy:      jetstream.AckFlowControlPolicy,
		FlowControl:    true,
		IdleHeartbeat:  time.Second,
		MaxAckPending:  65536,
		MaxDeliver:     -1,
	}
}
