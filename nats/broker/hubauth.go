package broker

import (
	"crypto/subtle"
	"encoding/base64"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// A hub authenticates its connections itself: nats-server, given two leaf
// connections of one identity, keeps the newer and drops the older, so
// two Pis started with the same creds would push each other out every
// few seconds. The hub's own check lets the house decide (LeafGate).

// LeafConn is a Pi's leaf connection whose key has signed the hub's
// challenge.
type LeafConn struct {
	ID   uint64 // the server's id of the connection (Leafs' ID)
	Key  string // the Pi's public nkey
	Name string // the name the Pi's server gives itself
	Addr string // host:port it connects from
}

// LeafGate admits Pis' leaf connections.
type LeafGate interface {
	// Admit returns the user a connection logs in as, with its
	// permissions; nil refuses it (the Pi reads "Authorization
	// Violation").
	Admit(c LeafConn) *server.NkeyUser
}

// hubAuth checks a hub's clients by user and password, as the server
// would, and its leaf connections by nkey and the gate.
type hubAuth struct {
	users  map[string]*server.User
	noAuth string // the user of a client without credentials, or ""
	gate   LeafGate
}

func newHubAuth(users []*server.User, noAuth string, gate LeafGate) *hubAuth {
	a := &hubAuth{users: map[string]*server.User{}, noAuth: noAuth, gate: gate}
	for _, u := range users {
		a.users[u.Username] = u
	}
	return a
}

// Check implements server.Authentication.
func (a *hubAuth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	switch c.Kind() {
	case server.CLIENT:
		if o.Nkey != "" || o.JWT != "" || o.Token != "" {
			return false // a Pi's key is for leaf connections only
		}
		if o.Username == "" && o.Password == "" && a.noAuth != "" {
			c.RegisterUser(a.users[a.noAuth])
			return true
		}
		u := a.users[o.Username]
		if u == nil || o.Username == a.noAuth || subtle.ConstantTimeCompare([]byte(u.Password), []byte(o.Password)) != 1 {
			return false
		}
		c.RegisterUser(u)
		return true
	case server.LEAF:
		if a.gate == nil || !signed(o.Nkey, o.Sig, c.GetNonce()) {
			return false
		}
		var addr string
		if ra := c.RemoteAddress(); ra != nil {
			addr = ra.String()
		}
		u := a.gate.Admit(LeafConn{ID: c.GetID(), Key: o.Nkey, Name: o.Name, Addr: addr})
		reg, ok := c.(interface{ RegisterNkeyUser(*server.NkeyUser) error })
		return u != nil && ok && reg.RegisterNkeyUser(u) == nil
	}
	return false
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
