package broker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lumen-home/lumen/nats/subject"
)

// Trust by accounts (DESIGN.md, "Trust: accounts, not deny-lists"). The
// server has three accounts:
//
//   - DaemonAccount holds every stream and bucket Lumen keeps, and only
//     the daemon's own connections (at a hub each Pi's leaf connection
//     is in an account of its own: leafaccounts.go). It exports commands and discovery as services,
//     events, LED announcements and frames and gpio changes as streams,
//     the ingress of inputs as a service, and read-only JetStream
//     requests (info, get, direct get) of the streams clients may read.
//   - ClientsAccount holds every outside NATS client: anonymous on
//     loopback or the --user. It has no JetStream of its own, so it can
//     create, restore, edit or consume nothing: it reaches the daemon
//     only through what it imports.
//   - DoorAccount holds the HTTP door alone, with the clients' imports:
//     nats-server does not check a request's reply subject against the
//     requester's permissions, so a client may have a reply delivered on
//     any subject of its own account (lumen.demo.led, say); in an account
//     of its own the page never sees such a forgery.
//   - MQTTAccount, with --mqtt, holds the MQTT clients, which need a
//     JetStream of their own for their sessions; only MQTT connections
//     log in there.
//
// The daemon's account imports what clients publish under prefixes
// (subject.ClientsPrefix, subject.MQTTPrefix), for the lights' push
// sources.
const (
	DaemonAccount  = "LUMEN"
	ClientsAccount = "CLIENTS"
	DoorAccount    = "DOOR"
	MQTTAccount    = "MQTT"
)

// responseThreshold is how long a command's replies may come after its
// request through the clients' import: the slowest verbs (ask, a tool
// run) answer within minutes.
const responseThreshold = "10m"

// accountsConfig is the accounts block of the server's configuration, in
// nats-server's configuration syntax: exports of the daemon's account,
// with read-only JetStream requests on readable streams; the clients'
// service imports and mapping; the MQTT account when mqtt is set. The
// stream imports are added by configureAccounts.
func accountsConfig(readable []string, mqtt bool) string {
	var daemon, clients []string
	service := func(subj string, streamed bool) {
		opt := ""
		if streamed {
			opt = ", response_type: stream, response_threshold: " + strconv.Quote(responseThreshold)
		}
		daemon = append(daemon, fmt.Sprintf("{service: %q%s}", subj, opt))
		clients = append(clients, fmt.Sprintf("{service: {account: %s, subject: %q}}", DaemonAccount, subj))
	}
	// Commands of one light, the fleet's (lumen.fleet.cmd.> is one of
	// them) and a group's fan out: every reply passes.
	service(subject.CmdPrefix("*")+".>", true)
	service(subject.GroupCmdPrefix("*")+".>", true)
	service("$SRV.>", true)
	service(subject.AllIngress(), false)
	// A Pi's clients ask the house for another Pi's light (its hub
	// answers; elsewhere no one does).
	service(subject.AllHouse(), false)
	// History in packed batches, read by the daemon (journal.ServeHistory).
	service(subject.AllHistory(), false)
	// Reading history: no consumer, no write.
	service("$JS.API.INFO", false)
	service("$JS.API.STREAM.NAMES", false)
	service("$JS.API.STREAM.LIST", false)
	for _, s := range readable {
		service("$JS.API.STREAM.INFO."+s, false)
		service("$JS.API.STREAM.MSG.GET."+s, false)
		service("$JS.API.DIRECT.GET."+s, true)
		service("$JS.API.DIRECT.GET."+s+".>", true)
	}
	for _, subj := range clientStreams() {
		daemon = append(daemon, fmt.Sprintf("{stream: %q}", subj))
	}

	from, to := subject.IngressMapping()
	var b strings.Builder
	if mqtt {
		// An MQTT client may publish a light's inputs too
		// (lumen/demo/evt/in/fired), through the same ingress.
		fmt.Fprintf(&b, "%s: { jetstream: enabled, mappings: { %q: %q }\n exports: [{stream: \">\"}]\n imports: [{service: {account: %s, subject: %q}}]\n}\n",
			MQTTAccount, from, to, DaemonAccount, subject.AllIngress())
	}
	fmt.Fprintf(&b, "%s: { jetstream: enabled\n exports: [\n  %s\n ]\n}\n", DaemonAccount, strings.Join(daemon, "\n  "))
	fmt.Fprintf(&b, "%s: { mappings: { %q: %q }\n exports: [{stream: \">\"}]\n imports: [\n  %s\n ]\n}\n", ClientsAccount, from, to, strings.Join(clients, "\n  "))
	fmt.Fprintf(&b, "%s: { mappings: { %q: %q }\n imports: [\n  %s\n ]\n}\n", DoorAccount, from, to, strings.Join(clients, "\n  "))
	return "accounts {\n" + b.String() + "}\n"
}

// clientStreams are what clients see of the daemon's account as it
// happens: events, LED announcements and frames, gpio changes.
func clientStreams() []string {
	return []string{subject.Events("*"), subject.LED("*"), subject.LEDFrames("*"), subject.AllGPIO("*")}
}

// configureAccounts sets opts' accounts: accountsConfig, then the stream
// imports. nats-server refuses an import that could form a cycle
// depending on the order imports are added (the daemon's account imports
// everything clients publish, under a prefix, and the clients' account
// imports the daemon's events), and a configuration file adds them in
// no set order: the order here is one it accepts. A reload copies
// imports as they are.
func configureAccounts(opts *server.Options, readable []string, mqtt bool) error {
	if err := opts.ProcessConfigString(accountsConfig(readable, mqtt)); err != nil {
		return fmt.Errorf("broker: configure accounts: %w", err)
	}
	accs := map[string]*server.Account{}
	for _, a := range opts.Accounts {
		accs[a.Name] = a
	}
	daemon, clients := accs[DaemonAccount], accs[ClientsAccount]
	if err := daemon.AddStreamImport(clients, ">", subject.ClientsPrefix()); err != nil {
		return fmt.Errorf("broker: import the clients' publishes: %w", err)
	}
	if mqtt {
		if err := daemon.AddStreamImport(accs[MQTTAccount], ">", subject.MQTTPrefix()); err != nil {
			return fmt.Errorf("broker: import the MQTT clients' publishes: %w", err)
		}
	}
	for _, acc := range []*server.Account{clients, accs[DoorAccount]} {
		for _, subj := range clientStreams() {
			if err := acc.AddStreamImport(daemon, subj, ""); err != nil {
				return fmt.Errorf("broker: import %s for %s: %w", subj, acc.Name, err)
			}
		}
	}
	return nil
}

// migrateAccount moves the streams of a data directory written before the
// daemon had an account of its own (in nats-server's global account, $G)
// to the daemon's account. A rename, so it is all or nothing.
func migrateAccount(dataDir string) (bool, error) {
	js := filepath.Join(dataDir, "jetstream")
	old, acct := filepath.Join(js, "$G"), filepath.Join(js, DaemonAccount)
	if _, err := os.Stat(old); err != nil {
		return false, nil
	}
	if _, err := os.Stat(acct); err == nil {
		return false, nil // already moved; a $G left beside it is not ours
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("broker: %w", err)
	}
	if err := os.Rename(old, acct); err != nil {
		return false, fmt.Errorf("broker: move the journal to the daemon's account (%s to %s): %w", old, acct, err)
	}
	return true, nil
}

// StreamsDir is the directory of the daemon's streams in a data
// directory, where nats-server keeps their blocks.
func StreamsDir(dataDir string) string {
	js := filepath.Join(dataDir, "jetstream")
	if _, err := os.Stat(filepath.Join(js, DaemonAccount)); err != nil {
		if _, err := os.Stat(filepath.Join(js, "$G")); err == nil {
			return filepath.Join(js, "$G", "streams") // not migrated yet
		}
	}
	return filepath.Join(js, DaemonAccount, "streams")
}
