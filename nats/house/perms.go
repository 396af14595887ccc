package house

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/subject"
)

// At the hub each Pi's leaf connection is bound to an account of its own
// (DESIGN.md, "Fleet"). The hub's account reaches into it for the Pi's
// lights' commands, its discovery, its JetStream API and the flow control
// of its house consumer; it receives from it the Pi's lights' events,
// LED and gpio announcements (under the Pi's prefix, which the hub
// relays: relay.go) and the house consumer's deliveries; the Pi may ask
// the hub's account for the house's everyday verbs (HouseCmd) and its
// directory (HouseLights), both under lumen.sys.house.>. Nothing
// else crosses: a Pi sees no other Pi's traffic or replies, and nothing
// it says reaches the hub's clients but as its own lights' words.

// accountName is the hub's account of p: its name and key, so that a Pi
// removed and added again (a new key) gets a new account, and whatever
// the old one still holds reaches no one.
func accountName(p Pi) string { return "PI_" + p.Name + registration(p) }

// registration tells one registration of a Pi from another: part of its
// key.
func registration(p Pi) string {
	key := p.PublicKey
	if len(key) > 12 {
		key = key[1:12]
	}
	return "_" + key
}

// fanAccount is the account light's fan-out passes through (piAccount).
func fanAccount(p Pi, light string) string {
	return "FAN_" + light + registration(p)
}

// RefusedAccount holds the leaf connections of a second machine with a
// Pi's creds: they may only ask why (WhySubject).
const RefusedAccount = "REFUSED"

// cmdThreshold is how long the reply to a light's command may take
// through the Pi's account: the slowest verbs (ask, a tool run) answer
// within minutes.
const cmdThreshold = 10 * time.Minute

// srvThreshold is how long a light's discovery replies may come after
// the request.
const srvThreshold = 10 * time.Second

// pubSuffix is where, under its prefix, the hub's account receives a
// Pi's lights' announcements: lumen.sys.pi.<pi>.pub.<subject>.
const pubSuffix = ".pub"

// piAccount is p's account at the hub.
func piAccount(p Pi) broker.LeafAccount {
	pre := subject.PiPrefix(p.Name)
	la := broker.LeafAccount{
		Name: accountName(p),
		Requests: []broker.Route{
			{From: pre + ".srv.>", To: "$SRV.>", Streamed: true, Threshold: srvThreshold},
			{From: APIPrefix(p.Name) + ".>"},
			{From: fcPrefix(p.Name) + ".>"},
		},
		Publishes: []broker.Route{{From: DeliverSubject(p.Name)}},
		Asks:      []broker.Route{{From: subject.AllHouse(), To: subject.PiHouse(p.Name) + ".>"}},
	}
	for _, l := range p.Lights {
		la.Requests = append(la.Requests, broker.Route{From: subject.CmdPrefix(l) + ".>", Threshold: cmdThreshold})
		// The fleet's and groups' commands fan out in the server: each
		// light's addressed form, through an account of the light's
		// own, so a Pi's account answers them for its own lights only
		// and once each (the light answers a group's only if it is in
		// it).
		for _, fan := range []string{subject.FleetCmdPrefix(), subject.GroupCmdPrefix("*")} {
			la.Requests = append(la.Requests, broker.Route{From: fan + ".*", To: subject.Addressed(fan, "*", l), Via: fanAccount(p, l)})
		}
		for _, subj := range announcements(l) {
			la.Publishes = append(la.Publishes, broker.Route{From: subj, To: pre + pubSuffix})
		}
	}
	return la
}

// announcements are what a light says that the hub's clients may hear.
func announcements(light string) []string {
	return []string{subject.Events(light), subject.LED(light), subject.LEDFrames(light), subject.AllGPIO(light)}
}

// refusedAccount lets a refused machine ask why.
func refusedAccount() broker.LeafAccount {
	return broker.LeafAccount{Name: RefusedAccount, Asks: []broker.Route{{From: WhySubject}}}
}

// fcPrefix is the prefix of the flow-control replies of a Pi's house
// consumer: the Pi's server names its domain in them
// (server.FeatureFlagJsAckFormatV2).
func fcPrefix(pi string) string { return "$JS.FC." + pi }

// Permissions are what a Pi may do in its account at the hub, from the
// Pi's side (the hub turns them around for the leaf link): publish what
// its own lights say, replies (through the account's imports, _R_),
// the journal to the house stream, and asks of the house; receive its
// own lights' commands, discovery, its own JetStream API and flow
// control, and the replies to its asks.
func Permissions(p Pi) *server.Permissions {
	pub := []string{
		"_R_.>", // replies to the hub's account, through its imports
		"deliver." + p.Name + ".>",
		subject.AllHouse(),
	}
	sub := []string{
		"$SRV.>",
		"_INBOX.>",
		"_R_.>", // replies to its asks, through its account's import
		fcPrefix(p.Name) + ".>",
		// The hub resets the house consumer and reads the stream's info.
		APIPrefix(p.Name) + ".CONSUMER.RESET." + subject.Stream + "." + Consumer,
		APIPrefix(p.Name) + ".STREAM.INFO." + subject.Stream,
		APIPrefix(p.Name) + ".DIRECT.GET." + subject.Stream + ".>",
		APIPrefix(p.Name) + ".CONSUMER.INFO." + subject.Stream + "." + Consumer,
	}
	for _, l := range p.Lights {
		pub = append(pub, "lumen."+l+".>")
		sub = append(sub, "lumen."+l+".>",
			subject.Addressed(subject.FleetCmdPrefix(), "*", l), subject.Addressed(subject.GroupCmdPrefix("*"), "*", l))
	}
	// No deny on what the Pi receives: the hub checks a leaf's messages
	// against it too, and would drop the Pi's own outputs.
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: sub},
	}
}
