// Package house joins Lumen daemons into one house over NATS leaf nodes:
// the hub's registry of Pis and the credentials it gives them, the house
// CA that signs the hub's certificate, what a Pi may do at the hub, the
// house stream that sources every Pi's journal, and the hub itself.
//
// Each Pi keeps its own JetStream in its own domain (the Pi's name), so a
// light's journal, snapshots and timers never depend on the hub; the hub
// (domain "hub") holds LUMEN_HOUSE, which sources each Pi's LUMEN through
// a push consumer the Pi owns. See ../shared/research/fleet-nats.md.
package house

import (
	"fmt"

	"github.com/lumen-home/lumen/nats/subject"
)

const (
	// Stream is the hub's stream of the whole house's events.
	Stream = "LUMEN_HOUSE"
	// HubDomain is the hub's JetStream domain; no Pi may take it.
	HubDomain = "hub"
	// Consumer is the durable push consumer each Pi keeps on its LUMEN
	// stream for the house: its ack floor is how far the hub has stored.
	Consumer = "HOUSE"
)

// maxPiName bounds a Pi's name (also its JetStream domain and part of
// its server's name).
const maxPiName = 32

// DeliverSubject is where a Pi's house consumer delivers to the hub.
func DeliverSubject(pi string) string { return "deliver." + pi + ".house" }

// APIPrefix is the prefix of a Pi's JetStream API seen from the hub.
func APIPrefix(pi string) string { return "$JS." + pi + ".API" }

// ValidPi says what is wrong with a Pi's name: like a light's, a-z, 0-9,
// '_' and '-', at most 32, and not the hub's domain.
func ValidPi(name string) error {
	if err := subject.ValidGroup(name); err != nil {
		return fmt.Errorf("house: Pi name %q: use a-z, 0-9, '_' and '-', e.g. kitchenpi", name)
	}
	switch {
	case len(name) > maxPiName:
		return fmt.Errorf("house: Pi name %q is longer than %d characters", name, maxPiName)
	case name == HubDomain:
		return fmt.Errorf("house: Pi name %q is the hub's own; pick another", name)
	}
	return nil
}
