package broker

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// At a hub each Pi's leaf connection is bound to an account of its own
// (DESIGN.md, "Fleet"): the Pi sees only what its account exports to the
// daemon's account and imports from it, never another Pi's traffic or
// replies. The house decides what each account holds (LeafAccount); the
// broker makes the accounts, at start (LeafListener.Accounts) or while
// the hub runs (AddLeafAccount).

// Route is a subject of one account reached on a subject of another: To
// is the subject on the side that answers or receives, "" for From's.
type Route struct {
	From, To string
	// Streamed lets a request have several replies (one per light, for
	// discovery), each within Threshold of the request (default 2 min).
	Streamed  bool
	Threshold time.Duration
	// Via, for a request, names an account of its own the request
	// passes through: nats-server takes one import of a subject per
	// account, and through accounts of their own one subject of the
	// daemon's account reaches several subjects of a leaf's (the
	// fleet's command, each light's addressed form).
	Via string
}

// LeafAccount is a hub's account for one leaf connection.
type LeafAccount struct {
	// Name of the account: a name no other account has.
	Name string
	// Requests the daemon's account sends into the leaf's: From is the
	// subject in the daemon's account, To the leaf's.
	Requests []Route
	// Publishes of the leaf the daemon's account receives: From is the
	// leaf's subject (wildcards allowed), To a literal prefix in the
	// daemon's account ("" for none).
	Publishes []Route
	// Asks are the daemon's services the leaf may request: From is the
	// subject in the leaf's account, To the daemon's.
	Asks []Route
}

// AddLeafAccount makes la's account while the hub runs; an account of
// that name made before is kept as it is. Subscriptions of the daemon's
// account made before see nothing of la's Publishes: subscribe after.
func (b *Broker) AddLeafAccount(la LeafAccount) error {
	if b.cfg.Leaf == nil {
		return errors.New("broker: leaf accounts are a hub's")
	}
	acc, isNew := b.srv.LookupOrRegisterAccount(la.Name)
	if !isNew {
		return nil
	}
	daemon, err := b.srv.LookupAccount(DaemonAccount)
	if err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	return wireLeafAccount(daemon, acc, la, func(name string) *server.Account {
		via, _ := b.srv.LookupOrRegisterAccount(name)
		return via
	})
}

// wireLeafAccount sets acc's exports and imports with the daemon's
// account as la says; account makes the accounts requests pass through.
func wireLeafAccount(daemon, acc *server.Account, la LeafAccount, account func(name string) *server.Account) error {
	for _, r := range la.Requests {
		to := orFrom(r)
		if r.Via == "" {
			if err := serviceRoute(acc, daemon, r.From, to, r); err != nil {
				return fmt.Errorf("broker: account %s: %w", la.Name, err)
			}
			continue
		}
		via := account(r.Via)
		if err := serviceRoute(acc, via, to, to, r); err != nil {
			return fmt.Errorf("broker: account %s: %w", r.Via, err)
		}
		if err := serviceRoute(via, daemon, r.From, to, r); err != nil {
			return fmt.Errorf("broker: account %s: %w", r.Via, err)
		}
	}
	only := func(a *server.Account) []*server.Account { return []*server.Account{a} }
	for _, r := range la.Publishes {
		if err := acc.AddStreamExport(r.From, only(daemon)); err != nil {
			return fmt.Errorf("broker: account %s: export %s: %w", la.Name, r.From, err)
		}
		if err := daemon.AddStreamImport(acc, r.From, r.To); err != nil {
			return fmt.Errorf("broker: account %s: import %s: %w", la.Name, r.From, err)
		}
	}
	for _, r := range la.Asks {
		to := orFrom(r)
		if err := daemon.AddServiceExport(to, only(acc)); err != nil {
			return fmt.Errorf("broker: account %s: export %s: %w", la.Name, to, err)
		}
		if err := acc.AddServiceImport(daemon, r.From, to); err != nil {
			return fmt.Errorf("broker: account %s: import %s: %w", la.Name, r.From, err)
		}
	}
	return nil
}

// serviceRoute lets importer request to (a subject of exporter) on from.
func serviceRoute(exporter, importer *server.Account, from, to string, r Route) error {
	resp := server.Singleton
	if r.Streamed {
		resp = server.Streamed
	}
	if err := exporter.AddServiceExportWithResponse(to, resp, []*server.Account{importer}); err != nil {
		return fmt.Errorf("export %s: %w", to, err)
	}
	if r.Threshold > 0 {
		if err := exporter.SetServiceExportResponseThreshold(to, r.Threshold); err != nil {
			return fmt.Errorf("%s: %w", to, err)
		}
	}
	if err := importer.AddServiceImport(exporter, from, to); err != nil {
		return fmt.Errorf("import %s: %w", from, err)
	}
	return nil
}

func orFrom(r Route) string {
	if r.To == "" {
		return r.From
	}
	return r.To
}

// leafAccounts adds the hub's first leaf accounts to opts, before the
// server starts: a Pi that connects at once finds its account.
func leafAccounts(opts *server.Options, las []LeafAccount) error {
	var daemon *server.Account
	for _, a := range opts.Accounts {
		if a.Name == DaemonAccount {
			daemon = a
		}
	}
	made := map[string]*server.Account{}
	account := func(name string) *server.Account {
		if made[name] == nil {
			made[name] = server.NewAccount(name)
			opts.Accounts = append(opts.Accounts, made[name])
		}
		return made[name]
	}
	for _, la := range las {
		if err := wireLeafAccount(daemon, account(la.Name), la, account); err != nil {
			return err
		}
	}
	return nil
}
