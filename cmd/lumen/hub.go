package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
)

// hubData is the hub's default data directory, beside lumen up's.
func hubData() string { return filepath.Join(filepath.Dir(daemon.DataDir()), "lumen-hub") }

func newHub(a *app) *cobra.Command {
	cfg := house.HubConfig{Data: hubData(), Listen: broker.DefaultListen, LeafListen: house.DefaultLeafListen}
	var doors cli.HubDoors
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Run a house's hub: Pis join it as NATS leaf nodes, clients reach every light through it",
		Long: `Run the hub of a house. Each Pi runs 'lumen up --hub … --creds …' and joins
the hub over a TLS leaf link; clients of the hub reach every light of every Pi
(commands, lumen.fleet.cmd, groups, 'nats micro ls', 'lumen ls'), and the hub's
stream LUMEN_HOUSE holds every light's events, copied from each Pi's journal.
A Pi keeps working alone while the hub is away, and the house catches up.
Each Pi is in an account of its own at the hub: it answers and hears only for
its own lights, and may ask for the everyday verbs (fire, set_state, power,
toggle, set_brightness, set_color) of any light of the house
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
			doors.Version = version
			return a.Hub(cmd.Context(), cfg, doors)
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
	f.StringVar(&doors.HTTP, "http", "", "serve the page and API (/api/v1) of every light of the house on `HOST:PORT`; off when not given; HOST:0 picks a free port; a host beyond this machine needs --user and --password")
	f.Int64Var(&cfg.MaxBytes, "max-bytes", 0, "the house stream's budget in `BYTES` (default 1 GiB): past it the oldest events go; each Pi keeps its own")
	f.StringVar(&doors.HA.URL, "ha-mqtt", "", "show every light of the house in Home Assistant through its MQTT broker `URL`, mqtt://HOST:1883 or mqtts://HOST:8883 (each light a device, unavailable while its Pi is away); off when not given")
	f.StringVar(&doors.HA.User, "ha-user", "", "the MQTT broker's user `NAME`, with --ha-password")
	f.StringVar(&doors.HA.Password, "ha-password", os.Getenv("LUMEN_HA_PASSWORD"), "the MQTT broker's `PASSWORD` (default $LUMEN_HA_PASSWORD, which keeps it out of the process list)")
	f.StringVar(&doors.HA.Prefix, "ha-prefix", "", "Home Assistant's discovery `PREFIX` (default homeassistant)")
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
			return a.AddPi(cmd.Context(), data, argv[0], lights, out)
		},
	}
	add.Flags().StringArrayVar(&lights, "light", nil, "a light the Pi runs (repeatable)")
	add.Flags().StringVar(&out, "out", "", "write the Pi's credentials to `FILE` (mode 0600)")
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a Pi: it can no longer connect; its history stays in the house stream",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.RemovePi(cmd.Context(), data, argv[0])
		},
	}
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the Pis: connected or since when not, their lights, how far the house lags behind",
		Args:  args(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.ListPis(data) },
	}
	cmd.AddCommand(add, ls, rm)
	return cmd
}
