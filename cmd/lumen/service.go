package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/nats/subject"
)

// serviceOptions are what the systemd unit runs.
type serviceOptions struct {
	binary string   // absolute path of lumen
	data   string   // --data of lumen up
	lights []string // --light of lumen up
	listen string   // --listen of lumen up; "" leaves it to lumen.yaml
	user   string   // the unit's User=
}

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
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmd.AddCommand(newServiceInstall(a))
	return cmd
}

func newServiceInstall(a *app) *cobra.Command {
	var o serviceOptions
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
			if err := o.complete(); err != nil {
				return err
			}
			unit := serviceUnit(o)
			if toStdout {
				_, err := fmt.Fprint(a.stdout, unit)
				return err
			}
			path := filepath.Join(unitDir, "lumen.service")
			if err := writeFileAtomic(path, []byte(unit), 0o644); err != nil {
				if errors.Is(err, os.ErrPermission) {
					return fmt.Errorf("cannot write %s: %w; run it as root (sudo lumen service install), or use --print", path, err)
				}
				return fmt.Errorf("cannot write %s: %w", path, err)
			}
			fmt.Fprintf(a.stdout, "wrote %s\nstart lumen now and at every boot with:\n  systemctl daemon-reload\n  systemctl enable --now lumen\n", path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.data, "data", "/var/lib/lumen", "data directory of the light (lumen up --data)")
	f.StringArrayVar(&o.lights, "light", nil, "a light to run (lumen up --light; repeat for several; default: lumen.yaml's, else demo)")
	f.StringVar(&o.listen, "listen", "", "NATS listen address (lumen up --listen; default: lumen.yaml's, else 127.0.0.1:4222)")
	f.StringVar(&o.user, "user", "root", "user the service runs as (root can drive the GPIO pins)")
	f.StringVar(&o.binary, "binary", "", "the lumen binary the unit starts (default: this one)")
	f.StringVar(&unitDir, "unit-dir", "/etc/systemd/system", "directory to write lumen.service into")
	f.BoolVar(&toStdout, "print", false, "write the unit to standard output, not to --unit-dir")
	return cmd
}

// complete fills in the binary and makes the paths absolute (systemd runs
// the unit from /), and checks the rest.
func (o *serviceOptions) complete() error {
	if o.binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("cannot tell where this lumen binary is (%w); give --binary", err)
		}
		o.binary = exe
	}
	for _, p := range []*string{&o.binary, &o.data} {
		if *p == "" {
			return usageError{errors.New("--data and --binary must not be empty")}
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	for _, l := range o.lights {
		if err := subject.ValidLight(l); err != nil {
			return usageError{fmt.Errorf("--light %q: %w", l, err)}
		}
	}
	if o.user == "" || strings.ContainsAny(o.user, " \t\n\"'\\%$") {
		return usageError{fmt.Errorf("--user %q is not a user name", o.user)}
	}
	if strings.ContainsAny(o.listen, " \t\n") {
		return usageError{fmt.Errorf("--listen %q: want HOST:PORT", o.listen)}
	}
	return nil
}

// serviceUnit is the text of lumen.service.
func serviceUnit(o serviceOptions) string {
	exec := []string{o.binary, "up", "--data", o.data}
	for _, l := range o.lights {
		exec = append(exec, "--light", l)
	}
	if o.listen != "" {
		exec = append(exec, "--listen", o.listen)
	}
	for i, arg := range exec {
		exec[i] = systemdQuote(arg)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# Written by 'lumen service install' (lumen %s).
[Unit]
Description=Lumen ambient light
Documentation=https://github.com/lumen-home/lumen
After=network-online.target time-sync.target
Wants=network-online.target
# Keep restarting a light however often it fails.
StartLimitIntervalSec=0

[Service]
ExecStart=%s
Restart=on-failure
RestartSec=2
# root by default: go-rpio maps /dev/mem (or /dev/gpiomem) to drive the pins.
User=%s
# No capabilities beyond the user's.
AmbientCapabilities=

[Install]
WantedBy=multi-user.target
`, version, strings.Join(exec, " "), o.user)
	return b.String()
}

// systemdQuote makes arg one word of an ExecStart= line: systemd expands
// % specifiers and $ variables, and splits on white space and quotes.
func systemdQuote(arg string) string {
	arg = strings.NewReplacer("%", "%%", "$", "$$").Replace(arg)
	if arg != "" && !strings.ContainsAny(arg, " \t\n\"'\\;") {
		return arg
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(arg) + `"`
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so a reader never sees half a unit.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, there is nothing left to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
