package broker

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/subject"
)

// Who may do what on the server. The daemon's own connections log in as
// DaemonUser, with a password made at each start and never written
// anywhere: they alone may journal outputs and manage the journal. Every
// other client (the nats and lumen CLIs, a script, an MQTT device) is a
// client: with Config.User and Password when they are set, else without
// credentials, on loopback. A client sends commands, publishes the inputs
// of the running lights and anything outside Lumen's subjects, and reads
// everything; it cannot forge an output, journal the inputs of a light
// that does not run (the stream does not take them), or delete, purge,
// edit or reconfigure the journal, the snapshots or a light's consumer.

// DaemonUser is the user of the daemon's own connections.
const DaemonUser = "lumen-daemon"

// anonUser is the user a client without credentials is, when Config has
// none.
const anonUser = "lumen-client"

// users returns the server's users: the daemon's, and the clients'.
func (c Config) users(daemonPassword string) (users []*server.User, noAuth string, err error) {
	client := &server.User{Username: c.User, Password: c.Password, Permissions: c.clientPermissions()}
	if c.Leaf != nil {
		// no_auth_user applies to leaf connections too: a Pi without
		// credentials must not join a hub as a client.
		client.AllowedConnectionTypes = map[string]struct{}{jwt.ConnectionTypeStandard: {}}
	}
	if c.User == "" {
		// Nobody presents these: a client without credentials is it.
		p, err := secret()
		if err != nil {
			return nil, "", err
		}
		client.Username, client.Password, noAuth = anonUser, p, anonUser
	}
	return []*server.User{{Username: DaemonUser, Password: daemonPassword}, client}, noAuth, nil
}

// clientPermissions allow everything but what only the daemon may do.
// A deny wins over an allow, so what is denied is denied for every
// light; the inputs of lights that do not run are kept out by the
// stream's subjects instead (StreamConfig).
func (c Config) clientPermissions() *server.Permissions {
	pub := []string{
		subject.AllOut("*"), // outputs are the light's own,
		subject.LED("*"),    // and so are its announcements
		subject.LEDFrames("*"),
		subject.AllGPIO("*"),
		"$KV." + subject.SnapshotBucket + ".>", // put, delete or purge a snapshot
		// Any stream: a stream that republishes could forge events.
		"$JS.API.STREAM.CREATE.*", "$JS.API.STREAM.UPDATE.*",
	}
	for _, stream := range append([]string{subject.Stream, "KV_" + subject.SnapshotBucket}, c.Protect...) {
		for _, op := range []string{"DELETE", "PURGE", "RESTORE", "MSG.DELETE", "PEER.REMOVE", "LEADER.STEPDOWN"} {
			pub = append(pub, "$JS.API.STREAM."+op+"."+stream)
		}
	}
	for _, l := range c.Lights {
		// The light's consumer: create or update (with a filter or
		// not), delete, pause, reset, unpin, pull from (MSG.NEXT), step
		// down or acknowledge for it. Its info stays readable.
		durable := subject.Stream + "." + subject.Consumer(l)
		for _, op := range []string{"CREATE", "DELETE", "PAUSE", "RESET", "UNPIN"} {
			pub = append(pub, "$JS.API.CONSUMER."+op+"."+durable)
		}
		pub = append(pub, "$JS.API.CONSUMER.CREATE."+durable+".>", "$JS.API.CONSUMER.*.*."+durable, "$JS.ACK."+durable+".>")
	}
	return &server.Permissions{
		Publish: &server.SubjectPermission{Deny: pub},
		// Serving a light's commands, or seeing the daemon's JetStream
		// calls, is the daemon's.
		Subscribe: &server.SubjectPermission{Deny: []string{
			subject.CmdPrefix("*") + ".>", subject.GroupCmdPrefix("*") + ".>", "$JS.API.>",
			"$SRV.*", "$SRV.*." + subject.Service, "$SRV.*." + subject.Service + ".>",
		}},
	}
}

// secret returns a random password.
func secret() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("broker: make a password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// daemonAuth is the client option of the daemon's connections.
func (b *Broker) daemonAuth() nats.Option { return nats.UserInfo(DaemonUser, b.daemonPassword) }
