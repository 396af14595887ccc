package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/web"
)

// hubData is the hub's default data directory, beside lumen up's.
func hubData() string { return filepath.Join(filepath.Dir(daemon.DataDir()), "lumen-hub") }

func newHub(a *app) *cobra.Command {
	cfg := house.HubConfig{Data: hubData(), Listen: broker.DefaultListen, LeafListen: house.DefaultLeafListen}
	var httpAddr string
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Run a house's hub: Pis join it as NATS leaf nodes, clients reach every light through it",
		Long: `Run the hub of a house. Each Pi runs 'lumen up --hub … --creds …' and joins
the hub over a TLS leaf link; clients of the hub reach every light of every Pi
(commands, lumen.fleet.cmd, groups, 'nats micro ls', 'lumen ls'), and the hub's
stream LUMEN_HOUSE holds every light's events, copied from each Pi's journal.
A Pi keeps working alone while the hub is away, and the house catches up.
Each Pi is in an account of its own at the hub: it answers and hears only for
its own lights, and may ask for fire and set_state of any light of the house
(lumen.sys.house.LIGHT.cmd.VERB on the Pi, journaled by pi:NAME).

Register each Pi first with 'lumen hub pi add'. At its first start the hub makes
the house CA (in --data) and signs its own certificate with it; a Pi refuses a
hub its creds' CA did not sign.

When ready it prints one line 'lumen: hub ready nats://HOST:PORT leaf HOST:PORT'
(and with --http, then 'lumen: page http://HOST:PORT/').`,
		Example: `  lumen hub --listen 0.0.0.0:4222 --user admin --password … --leaf-listen 0.0.0.0:7422
  lumen hub pi add kitchenpi --light kitchen --light hall --out kitchenpi.creds`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Logf = func(format string, args ...any) {
				// The server's own lines: only its warnings and errors.
				if !strings.HasPrefix(format, "nats: ") || strings.HasPrefix(format, "nats: error: ") || strings.HasPrefix(format, "nats: warning: ") && !strings.Contains(format, "Plaintext passwords") {
					logTo(a.Stderr)(format, args...)
				}
			}
			h, err := house.NewHub(cfg)
			if err != nil {
				return cli.UsageError{Err: err}
			}
			site, err := web.Listen("--http", httpAddr, cfg.User != "", cfg.Logf)
			if err != nil {
				return cli.UsageError{Err: err}
			}
			var nc *nats.Conn
			defer func() { // the page first, then its connection, then the hub
				site.Close()
				if nc != nil {
					nc.Close()
				}
				_ = h.Close()
			}()
			if err := h.Run(cmd.Context()); err != nil {
				return err
			}
			if site != nil {
				// The page and API of the whole house, as a client of the hub.
				if nc, err = web.Dial(h.URL(), h.Door()...); err != nil {
					return err
				}
				if err := site.Serve(web.Config{NC: nc, Hosts: cfg.SANs, User: cfg.User, Password: cfg.Password, Logf: cfg.Logf}); err != nil {
					return err
				}
			}
			fmt.Fprintf(a.Stdout, "lumen: hub ready %s leaf %s\n", h.URL(), h.LeafAddr())
			if site != nil {
				fmt.Fprintf(a.Stdout, "lumen: page %s/\n", site.URL())
			}
			<-cmd.Context().Done()
			fmt.Fprintln(a.Stderr, "lumen: shutting down")
			return nil // the deferred close, in order
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", cfg.Data, "keep the house stream, the Pis, the house CA and their status in `DIR`")
	f.StringVar(&cfg.Listen, "listen", cfg.Listen, "accept clients on `HOST:PORT`; HOST:0 picks a free port; a host beyond this machine needs --user and --password")
	f.StringVar(&cfg.LeafListen, "leaf-listen", cfg.LeafListen, "accept the Pis (TLS, their creds) on `HOST:PORT`")
	f.StringVar(&cfg.User, "user", "", "the admin's user `NAME` on --listen, with --password")
	f.StringVar(&cfg.Password, "password", "", "the admin's `PASSWORD`")
	f.StringArrayVar(&cfg.SANs, "san", nil, "a `NAME` or address the Pis dial the hub by (and the page may be reached by), besides this machine's names (repeatable)")
	f.StringVar(&cfg.Sync, "sync", broker.SyncAlways, "when events reach the disk, `always|batch`")
	f.StringVar(&httpAddr, "http", "", "serve the page and API (/api/v1) of every light of the house on `HOST:PORT`; off when not given; HOST:0 picks a free port; a host beyond this machine needs --user and --password")
	f.Int64Var(&cfg.MaxBytes, "max-bytes", 0, "the house stream's budget in `BYTES` (default 1 GiB): past it the oldest events go; each Pi keeps its own")
	cmd.AddCommand(newHubPi(a))
	return cmd
}

func newHubPi(a *app) *cobra.Command {
	data := hubData()
	cmd := &cobra.Command{
		Use:   "pi",
		Short: "Register, list and remove the Pis of the house",
		Long: `The hub's Pis, kept in its --data directory: these commands work whether or
not the hub runs, and a running hub takes each change within a second.`,
	}
	cmd.PersistentFlags().StringVar(&data, "data", data, "the hub's data `DIR`")
	var lights []string
	var out string
	add := &cobra.Command{
		Use:   "add NAME --light LIGHT… --out FILE",
		Short: "Register a Pi and write the credentials it joins with",
		Long: `Register the Pi NAME, which runs the lights given with --light (a light runs
on one Pi), and write its credentials to --out: its key, its lights and the
house CA. Copy them to the Pi (they are its secret) and start it with
'lumen up --light … --hub tls://HUB:7422 --creds FILE'.`,
		Example: `  lumen hub pi add kitchenpi --light kitchen --light hall --out kitchenpi.creds`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if out == "" {
				return cli.UsageError{Err: fmt.Errorf("give --out FILE, where the Pi's credentials go")}
			}
			reg, err := house.LoadRegistry(data)
			if err != nil {
				return err
			}
			seed, err := reg.Add(argv[0], lights, time.Now())
			if err != nil {
				return cli.UsageError{Err: err}
			}
			ca, err := house.EnsureCA(house.Dir(data))
			if err != nil {
				return err
			}
			if err := (house.Creds{Pi: argv[0], Lights: lights, Seed: seed, CA: string(ca.PEM)}).Write(out); err != nil {
				return err
			}
			if err := cli.SaveRegistry(cmd.Context(), data, &reg); err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "registered Pi %s (lights %s); its credentials are in %s: copy them to the Pi and run\n  lumen up --light %s --hub tls://HUB:7422 --creds %s\n",
				argv[0], strings.Join(lights, ", "), out, strings.Join(lights, " --light "), filepath.Base(out))
			return nil
		},
	}
	add.Flags().StringArrayVar(&lights, "light", nil, "a light the Pi runs (repeatable)")
	add.Flags().StringVar(&out, "out", "", "write the Pi's credentials to `FILE` (mode 0600)")
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a Pi: it can no longer connect; its history stays in the house stream",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			reg, err := house.LoadRegistry(data)
			if err != nil {
				return err
			}
			if err := reg.Remove(argv[0]); err != nil {
				return err
			}
			if err := cli.SaveRegistry(cmd.Context(), data, &reg); err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "removed Pi %s: it can no longer connect; its history stays in the house stream\n", argv[0])
			return nil
		},
	}
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the Pis: connected or since when not, their lights, how far the house lags behind",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := house.LoadRegistry(data)
			if err != nil {
				return err
			}
			if len(reg.Pis) == 0 {
				fmt.Fprintln(a.Stdout, "no Pi yet: 'lumen hub pi add NAME --light LIGHT --out FILE' registers one")
				return nil
			}
			st, err := house.ReadStatus(data)
			if err != nil {
				return err
			}
			running := broker.InUse(data)
			w := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "PI\tLIGHTS\tSTATUS\tLAG")
			for _, p := range reg.Pis {
				s, ok := st.Pis[p.Name]
				status, lag := "hub not running", "-"
				switch {
				case !running:
				case !ok:
					status = "registered, not seen yet"
				case s.Connected:
					status, lag = "connected since "+cli.Ago(s.Since), fmt.Sprint(s.Lag)
				default:
					status, lag = "disconnected since "+cli.Ago(s.Since), fmt.Sprint(s.Lag)
				}
				if running && s.Connected && !s.Stalled.IsZero() {
					lag += " (copy stalled since " + cli.Ago(s.Stalled) + ")"
				}
				if running && s.Refused != "" {
					status += fmt.Sprintf("; refused a second Pi from %s since %s: each Pi needs its own creds (lumen hub pi add)", s.Refused, cli.Ago(s.RefusedSince))
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", p.Name, strings.Join(p.Lights, ","), status, lag)
			}
			return w.Flush()
		},
	}
	cmd.AddCommand(add, ls, rm)
	return cmd
}
