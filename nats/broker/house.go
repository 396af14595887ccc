package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// A house is servers joined by NATS leaf nodes: one hub, and one server
// per Pi dialing it. Each keeps its own JetStream in its own domain, so a
// Pi's journal never depends on the hub (../shared/research/fleet-nats.md).

// HubLink joins the server to a house as a leaf node of its hub.
type HubLink struct {
	// URL of the hub's leaf listener, tls://HOST:PORT.
	URL string
	// Seed is the Pi's nkey user seed (SU…): its identity at the hub.
	Seed string
	// CAs verify the hub's certificate: the house CA.
	CAs *x509.CertPool
}

// LeafListener makes the server a house's hub: it accepts the Pis.
type LeafListener struct {
	// Addr is host:port of the leaf listener (port 0 picks a free one).
	Addr string
	// Cert is the hub's TLS certificate, signed by the house CA.
	Cert tls.Certificate
	// Gate admits the Pis: the hub checks every connection itself
	// (hubauth.go).
	Gate LeafGate
	// Accounts are the leaf accounts the hub has from its start
	// (AddLeafAccount adds more).
	Accounts []LeafAccount
}

// linkPing is how often a house link is pinged; two unanswered pings
// drop it, so a silently dead link is noticed in about 20 s, not minutes.
const linkPing = 10 * time.Second

// hubReconnect is how often a Pi dials a hub it cannot reach.
const hubReconnect = 2 * time.Second

// houseOptions sets the leaf-node options of a hub or of a Pi on opts.
func (c Config) houseOptions(opts *server.Options) error {
	if c.Hub != nil && c.Leaf != nil {
		return errors.New("broker: a server is a hub (Leaf) or joins one (Hub), not both")
	}
	if c.Hub != nil || c.Leaf != nil {
		opts.PingInterval, opts.MaxPingsOut = linkPing, 2
	}
	if h := c.Hub; h != nil {
		u, err := url.Parse(h.URL)
		if err != nil || u.Host == "" {
			return fmt.Errorf("broker: hub URL %q is not tls://HOST:PORT", h.URL)
		}
		opts.LeafNode.ReconnectInterval = hubReconnect
		opts.LeafNode.Remotes = []*server.RemoteLeafOpts{{
			URLs: []*url.URL{u},
			// The house sources the Pi's journal, which lives in the
			// daemon's account.
			LocalAccount: DaemonAccount,
			Nkey:         h.Seed,
			TLS:          true,
			TLSConfig: &tls.Config{RootCAs: h.CAs, MinVersion: tls.VersionTLS12,
				ServerName: u.Hostname()},
			TLSTimeout: 2,
			// Dial the address the certificate covers, not what the hub
			// advertises.
			IgnoreDiscoveredServers: true,
			Compression:             server.CompressionOpts{Mode: server.CompressionOff},
		}}
		// Acks and flow control name the Pi's domain
		// ($JS.FC.<domain>.…): the hub sends each Pi's flow-control
		// replies to that Pi alone, though every Pi's house consumer
		// has one name.
		opts.FeatureFlags = map[string]bool{server.FeatureFlagJsAckFormatV2: true}
	}
	if l := c.Leaf; l != nil {
		hp, err := parseListen(l.Addr)
		if err != nil {
			return err
		}
		opts.LeafNode.Host, opts.LeafNode.Port = hp.host, hp.port
		if hp.port == 0 {
			opts.LeafNode.Port = server.RANDOM_PORT
		}
		opts.LeafNode.TLSConfig = &tls.Config{Certificates: []tls.Certificate{l.Cert}, MinVersion: tls.VersionTLS12}
		opts.LeafNode.TLSTimeout = 2
		opts.LeafNode.NoAdvertise = true
		// No compression on the house's links: its messages are small
		// JSON on a LAN, and nats-server's s2 keeps about 4 MB of buffers
		// on each end of each link (400 MB at a hub of 100 Pis).
		opts.LeafNode.Compression = server.CompressionOpts{Mode: server.CompressionOff}
		// No interest flows from one Pi to another through the hub.
		opts.LeafNode.IsolateLeafnodeInterest = true
		// A client presenting a key hears "Authorization Violation",
		// not that the server knows no keys.
		opts.AlwaysEnableNonce = true
		// Replies to the sourcing consumers' set-up name the Pi's domain,
		// so a Pi's permissions can be narrowed to its own.
		opts.FeatureFlags = map[string]bool{server.FeatureFlagJsAPIReplyFormatV2: true}
	}
	return nil
}

// LeafAddr is the host:port of a hub's leaf listener (an unspecified
// host is reported as 127.0.0.1), or "".
func (b *Broker) LeafAddr() string {
	if b.cfg.Leaf == nil {
		return ""
	}
	b.reload.Lock()
	defer b.reload.Unlock()
	return DialAddr(b.opts.LeafNode.Host, b.opts.LeafNode.Port)
}

// Leaf is a leaf connection of a hub.
type Leaf struct {
	ID   uint64 // as LeafConn's
	Name string // the server name of the Pi
	Addr string // host:port it connects from
}

// Leafs returns the leaf connections of a hub.
func (b *Broker) Leafs() ([]Leaf, error) {
	z, err := b.srv.Leafz(&server.LeafzOptions{})
	if err != nil {
		return nil, fmt.Errorf("broker: leafs: %w", err)
	}
	out := make([]Leaf, len(z.Leafs))
	for i, l := range z.Leafs {
		out[i] = Leaf{ID: l.ID, Name: l.Name, Addr: net.JoinHostPort(l.IP, strconv.Itoa(l.Port))}
	}
	return out, nil
}

// HubLinked reports whether a Pi's server is connected to its hub, and
// else the last reason the server gave.
func (b *Broker) HubLinked() (bool, string) {
	if b.srv.NumLeafNodes() > 0 {
		return true, ""
	}
	why, _ := b.log.link.Load().(string)
	return false, why
}

// KickAll closes every leaf connection: a Pi removed keeps the
// connection it has, so the hub ends them all, and only the Pis still
// registered log in again.
func (b *Broker) KickAll() error {
	z, err := b.srv.Leafz(&server.LeafzOptions{})
	if err != nil {
		return fmt.Errorf("broker: leafs: %w", err)
	}
	for _, l := range z.Leafs {
		if err := b.srv.DisconnectClientByID(l.ID); err != nil {
			return fmt.Errorf("broker: disconnect %s: %w", l.Name, err)
		}
	}
	return nil
}
