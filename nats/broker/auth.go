package broker

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"reflect"
	"sync"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/lumen-home/lumen/nats/subject"
)

// Who logs in where. The daemon's own connections log in with a token
// made at each start and never written anywhere, to the daemon's
// account. The HTTP door logs in likewise, with a token of its own, to
// an account of its own with the clients' imports. Every
// other NATS client is one principal of the clients' account: Config.User
// with Config.Password when they are set, else anyone without
// credentials on loopback. MQTT clients present the same credentials (or
// none) and log in to the MQTT account. At a hub, the Pis' leaf
// connections log in by nkey through the gate (LeafGate).
//
// nats-server keys its users by name, so one name cannot be in two
// accounts: the broker checks every connection itself (auth.Check).

// DaemonUser and DoorUser are reserved names: --user may not take them.
const (
	DaemonUser = "lumen-daemon"
	DoorUser   = "lumen-http"
)

// DoorInbox is the inbox prefix of the HTTP door's replies: no other
// client may read them.
const DoorInbox = "_INBOX_lumen_http"

// anonUser is the user a client without credentials is, when Config has
// none.
const anonUser = "lumen-client"

// auth checks every connection of the server.
type auth struct {
	daemonPassword, doorPassword string
	user, password               string // the outside clients', "" for none (loopback)
	gate                         LeafGate

	mu       sync.Mutex
	srv      *server.Server
	accounts map[string]*server.Account
}

func newAuth(c Config) (*auth, error) {
	dp, err := secret()
	if err != nil {
		return nil, err
	}
	hp, err := secret()
	if err != nil {
		return nil, err
	}
	a := &auth{daemonPassword: dp, doorPassword: hp, user: c.User, password: c.Password}
	if c.Leaf != nil {
		a.gate = c.Leaf.Gate
	}
	return a, nil
}

// account returns the server's account of that name.
func (a *auth) account(name string) *server.Account {
	a.mu.Lock()
	defer a.mu.Unlock()
	if acc := a.accounts[name]; acc != nil {
		return acc
	}
	if a.srv == nil {
		return nil
	}
	acc, err := a.srv.LookupAccount(name)
	if err != nil {
		return nil
	}
	if a.accounts == nil {
		a.accounts = map[string]*server.Account{}
	}
	a.accounts[name] = acc
	return acc
}

// Check implements server.Authentication.
func (a *auth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	switch c.Kind() {
	case server.CLIENT:
		if isMQTT(c) {
			if !a.outside(o) {
				return false
			}
			return a.register(c, &server.User{Username: "mqtt", Account: a.account(MQTTAccount)})
		}
		if o.Nkey != "" || o.JWT != "" {
			return false // a Pi's key is for leaf connections only
		}
		// The daemon's and the door's connections present a token, not
		// a user name: a reload of the server's configuration closes
		// every connection whose user name it does not know (it knows
		// none: the broker checks them), and these must stay.
		if o.Token != "" {
			switch {
			case o.Username != "" || o.Password != "":
				return false
			case same(o.Token, a.daemonPassword):
				return a.register(c, &server.User{Account: a.account(DaemonAccount)})
			case same(o.Token, a.doorPassword):
				return a.register(c, &server.User{Account: a.account(DoorAccount), Permissions: clientPermissions(true)})
			}
			return false
		}
		if !a.outside(o) {
			return false
		}
		name := a.user
		if name == "" {
			name = anonUser
		}
		return a.register(c, &server.User{Username: name, Account: a.account(ClientsAccount), Permissions: clientPermissions(false)})
	case server.LEAF:
		if a.gate == nil || !signed(o.Nkey, o.Sig, c.GetNonce()) {
			return false
		}
		var addr string
		if ra := c.RemoteAddress(); ra != nil {
			addr = ra.String()
		}
		lu := a.gate.Admit(LeafConn{ID: c.GetID(), Key: o.Nkey, Name: o.Name, Addr: addr})
		if lu == nil {
			return false
		}
		u := &server.NkeyUser{Nkey: o.Nkey, Permissions: lu.Permissions, Account: a.account(lu.Account)}
		reg, ok := c.(interface{ RegisterNkeyUser(*server.NkeyUser) error })
		return ok && u.Account != nil && reg.RegisterNkeyUser(u) == nil
	}
	return false
}

// outside reports whether o presents the outside clients' credentials:
// none when the server has none, else its user and password.
func (a *auth) outside(o *server.ClientOpts) bool {
	if a.user == "" {
		return o.Username == "" && o.Password == ""
	}
	return o.Username == a.user && same(o.Password, a.password)
}

// register logs c in as u; an account the server does not have refuses
// it.
func (a *auth) register(c server.ClientAuthentication, u *server.User) bool {
	if u.Account == nil {
		return false
	}
	c.RegisterUser(u)
	return true
}

func same(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// isMQTT reports whether c came in through the MQTT listener.
// nats-server's Authentication interface does not say, and an MQTT
// client's credentials are the NATS clients' (one name, two accounts):
// its connection has MQTT state. If a nats-server upgrade renames that
// field, MQTT clients are refused (and the MQTT tests fail), never let
// into the clients' account.
func isMQTT(c server.ClientAuthentication) bool {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("mqtt")
	return f.IsValid() && f.Kind() == reflect.Pointer && !f.IsNil()
}

// clientPermissions are an outside client's, in the clients' account,
// and the door's. They name only Lumen's own subjects there, which the
// daemon's account serves through imports: a client that could publish a
// light's events or answer its commands in the clients' account would
// deceive the other clients, not the daemon.
func clientPermissions(door bool) *server.Permissions {
	sub := []string{
		subject.CmdPrefix("*") + ".>", subject.GroupCmdPrefix("*") + ".>",
		"$SRV.>", "$JS.API.>", subject.AllIngress(), subject.AllHistory(), subject.AllHouse(),
	}
	if !door {
		sub = append(sub, DoorInbox+".>")
	}
	return &server.Permissions{
		// Checked after the account's mappings: a light's inputs are
		// mapped to the ingress, and pass.
		Publish: &server.SubjectPermission{Deny: []string{
			subject.Events("*"), subject.LED("*"), subject.LEDFrames("*"), subject.AllGPIO("*"), DoorInbox + ".>",
		}},
		Subscribe: &server.SubjectPermission{Deny: sub},
	}
}

// signed reports whether sig is key's signature of nonce.
func signed(key, sig string, nonce []byte) bool {
	if key == "" || sig == "" || len(nonce) == 0 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		if raw, err = base64.StdEncoding.DecodeString(sig); err != nil {
			return false
		}
	}
	pub, err := nkeys.FromPublicKey(key)
	if err != nil {
		return false
	}
	return pub.Verify(nonce, raw) == nil
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
func (b *Broker) daemonAuth() nats.Option { return nats.Token(b.auth.daemonPassword) }

// Door returns the options the HTTP door connects with: a client of the
// clients' account whose replies no other client reads.
func (b *Broker) Door() []nats.Option {
	return []nats.Option{nats.Token(b.auth.doorPassword), nats.CustomInboxPrefix(DoorInbox)}
}
