package house

import (
	"github.com/nats-io/nats-server/v2/server"

	"github.com/lumen-home/lumen/nats/subject"
)

// Permissions are what a Pi may do at the hub, from the Pi's side (the
// hub turns them around for the leaf link): publish what its own lights
// say (events, announcements, replies), and what sourcing its journal
// needs; receive its own lights' commands and inputs, the fleet's and the
// groups' commands, discovery and its own JetStream API. So a Pi cannot
// command, configure or read another Pi's light.
func Permissions(p Pi) *server.Permissions {
	pub := []string{
		"_INBOX.>",                 // replies (allow_responses does not cross a leaf)
		"_R_.>",                    // replies to the hub's clients, through the imports of their account
		"$JSC.R." + p.Name + ".>",  // replies to the sourcing consumer's set-up
		"deliver." + p.Name + ".>", // the journal, to the house stream
	}
	sub := []string{
		subject.FleetCmdPrefix() + ".>",
		subject.GroupCmdPrefix("*") + ".>",
		"$SRV.>",
		"_INBOX.>",
		"$JS.FC.>",
		// The hub resets the house consumer and reads the stream's info.
		APIPrefix(p.Name) + ".CONSUMER.RESET." + subject.Stream + "." + Consumer,
		APIPrefix(p.Name) + ".STREAM.INFO." + subject.Stream,
		APIPrefix(p.Name) + ".DIRECT.GET." + subject.Stream + ".>",
		APIPrefix(p.Name) + ".CONSUMER.INFO." + subject.Stream + "." + Consumer,
	}
	for _, l := range p.Lights {
		pub = append(pub, "lumen."+l+".>")
		sub = append(sub, "lumen."+l+".>")
	}
	// No deny on what the Pi receives: the hub checks a leaf's messages
	// against it too, and would drop the Pi's own outputs. Outputs are
	// safe all the same: the hub's clients may not publish any (broker's
	// client permissions), and no Pi may publish another's.
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: sub},
	}
}
