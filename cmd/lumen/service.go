package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/cli"
)

func newService(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Run lumen at boot as a systemd service",
		Long: `Set up a Raspberry Pi (or any systemd machine) to start the light at boot:
'lumen service install' writes a systemd unit that runs 'lumen up'. It does
not run systemctl itself; it prints the two commands to run.`,
		Example: `  sudo lumen service install                     # then the two systemctl commands it prints
  lumen service install --print                  # just show the unit`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Usage(err) })
	cmd.AddCommand(newServiceInstall(a))
	return cmd
}

func newServiceInstall(a *app) *cobra.Command {
	o := daemon.Unit{Version: version}
	var unitDir string
	var toStdout bool
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Write the systemd unit lumen.service that runs 'lumen up' at boot",
		Long: `Write lumen.service into --unit-dir (default /etc/systemd/system, which needs
root) with mode 0644. The unit runs this lumen binary (or --binary) as
'lumen up --data DIR', with --light and --listen if given; everything else
comes from DIR/lumen.yaml, as with 'lumen up'. It restarts lumen 2 s after a
failure and starts it once the network is up and the clock is synchronised
(journal timestamps and schedules need the time; a Pi has no clock battery).

It runs as root by default: go-rpio maps /dev/mem to drive the GPIO pins.
With --user, that user must be able to write --data; on a machine without
GPIO the simulated light needs no privileges.

Then run the two commands it prints:
  systemctl daemon-reload
  systemctl enable --now lumen
and follow the light with 'journalctl -u lumen -f'. --print writes the unit to
standard output instead of a file.`,
		Example: `  sudo lumen service install
  sudo lumen service install --light kitchen --listen 0.0.0.0:4222
  lumen service install --print --data /srv/lumen --user lumen`,
		Args: args(cobra.NoArgs),
		RunE: func(_ *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return cli.Usage(err)
			}
			if toStdout {
				_, err := fmt.Fprint(a.Stdout, o.Text())
				return err
			}
			path, err := o.Install(unitDir)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "wrote %s\nstart lumen now and at every boot with:\n  systemctl daemon-reload\n  systemctl enable --now lumen\n", path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Data, "data", "/var/lib/lumen", "data directory of the light (lumen up --data)")
	f.StringArrayVar(&o.Lights, "light", nil, "a light to run (lumen up --light; repeat for several; default: lumen.yaml's, else demo)")
	f.StringVar(&o.Listen, "listen", "", "NATS listen address (lumen up --listen; default: lumen.yaml's, else 127.0.0.1:4222)")
	f.StringVar(&o.User, "user", "root", "user the service runs as (root can drive the GPIO pins)")
	f.StringVar(&o.Binary, "binary", "", "the lumen binary the unit starts (default: this one)")
	f.StringVar(&unitDir, "unit-dir", "/etc/systemd/system", "directory to write lumen.service into")
	f.BoolVar(&toStdout, "print", false, "write the unit to standard output, not to --unit-dir")
	return cmd
}
