package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lumen-home/lumen/internal/atomicfile"
	"github.com/lumen-home/lumen/nats/subject"
)

// Unit is the systemd service lumen.service, which runs `lumen up` at
// boot: lumen up --data Data, with --light and --listen if given;
// everything else comes from Data/lumen.yaml.
type Unit struct {
	Binary  string   // absolute path of lumen (Complete: this binary)
	Data    string   // --data of lumen up
	Lights  []string // --light of lumen up
	Listen  string   // --listen of lumen up; "" leaves it to lumen.yaml
	User    string   // the unit's User=
	Version string   // of the lumen that writes it, in a comment
}

// Complete fills in the binary (this one) and makes the paths absolute
// (systemd runs the unit from /), and checks the rest.
func (o *Unit) Complete() error {
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("cannot tell where this lumen binary is (%w); give --binary", err)
		}
		o.Binary = exe
	}
	for _, p := range []*string{&o.Binary, &o.Data} {
		if *p == "" {
			return errors.New("--data and --binary must not be empty")
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return err
		}
		*p = abs
	}
	for i, typed := range o.Lights {
		l, err := subject.LightName(typed)
		if err != nil {
			return fmt.Errorf("--light: %w", err)
		}
		o.Lights[i] = l
	}
	if o.User == "" || strings.ContainsAny(o.User, " \t\n\"'\\%$") {
		return fmt.Errorf("--user %q is not a user name", o.User)
	}
	if strings.ContainsAny(o.Listen, " \t\n") {
		return fmt.Errorf("--listen %q: want HOST:PORT", o.Listen)
	}
	return nil
}

// Text is the unit file.
func (o *Unit) Text() string {
	exec := []string{o.Binary, "up", "--data", o.Data}
	for _, l := range o.Lights {
		exec = append(exec, "--light", l)
	}
	if o.Listen != "" {
		exec = append(exec, "--listen", o.Listen)
	}
	for i, arg := range exec {
		exec[i] = SystemdQuote(arg)
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
`, o.Version, strings.Join(exec, " "), o.User)
	return b.String()
}

// SystemdQuote makes arg one word of an ExecStart= line: systemd expands
// % specifiers and $ variables, and splits on white space and quotes.
func SystemdQuote(arg string) string {
	arg = strings.NewReplacer("%", "%%", "$", "$$").Replace(arg)
	if arg != "" && !strings.ContainsAny(arg, " \t\n\"'\\;") {
		return arg
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(arg) + `"`
}

// Install writes the unit into dir as lumen.service, mode 0644, and
// returns its path.
func (o *Unit) Install(dir string) (string, error) {
	path := filepath.Join(dir, "lumen.service")
	if err := atomicfile.WriteBytes(path, []byte(o.Text()), 0o644); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return path, fmt.Errorf("cannot write %s: %w; run it as root (sudo lumen service install), or use --print", path, err)
		}
		return path, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return path, nil
}
