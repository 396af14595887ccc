package broker

import "github.com/nats-io/nats-server/v2/server"

// A hub authenticates its connections itself: nats-server, given two leaf
// connections of one identity, keeps the newer and drops the older, so
// two Pis started with the same creds would push each other out every
// few seconds. The broker's own check (auth.go) lets the house decide (LeafGate).

// LeafConn is a Pi's leaf connection whose key has signed the hub's
// challenge.
type LeafConn struct {
	ID   uint64 // the server's id of the connection (Leafs' ID)
	Key  string // the Pi's public nkey
	Name string // the name the Pi's server gives itself
	Addr string // host:port it connects from
}

// LeafUser is what an admitted leaf connection logs in as.
type LeafUser struct {
	// Account is the name of the leaf account it is bound to
	// (LeafAccount): the server refuses a connection whose account it
	// does not have.
	Account     string
	Permissions *server.Permissions
}

// LeafGate admits Pis' leaf connections.
type LeafGate interface {
	// Admit returns the user a connection logs in as; nil refuses it
	// (the Pi reads "Authorization Violation").
	Admit(c LeafConn) *LeafUser
}
