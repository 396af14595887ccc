package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/cli"
)

// runService runs 'lumen service ARGS…' in process and returns its
// standard output.
func runService(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := newService(&app{Term: &cli.Term{Stdout: &stdout, Stderr: &stderr}})
	cmd.SetArgs(args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return stdout.String(), err
}

const wantDefaultUnit = `# Written by 'lumen service install' (lumen dev).
[Unit]
Description=Lumen ambient light
Documentation=https://github.com/lumen-home/lumen
After=network-online.target time-sync.target
Wants=network-online.target
# Keep restarting a light however often it fails.
StartLimitIntervalSec=0

[Service]
ExecStart=/usr/local/bin/lumen up --data /var/lib/lumen
Restart=on-failure
RestartSec=2
# root by default: go-rpio maps /dev/mem (or /dev/gpiomem) to drive the pins.
User=root
# No capabilities beyond the user's.
AmbientCapabilities=

[Install]
WantedBy=multi-user.target
`

func TestServiceInstall(t *testing.T) {
	tests := []struct {
		name      string
		given     []string
		wantExec  string // the ExecStart= line
		wantUser  string // the User= line
		wantError string // substring; the error is a usage error
	}{
		{
			name:     "defaults",
			given:    nil,
			wantExec: "ExecStart=/usr/local/bin/lumen up --data /var/lib/lumen",
			wantUser: "User=root",
		},
		{
			name:     "lights and listen",
			given:    []string{"--light", "kitchen", "--light", "hall", "--listen", "0.0.0.0:4222"},
			wantExec: "ExecStart=/usr/local/bin/lumen up --data /var/lib/lumen --light kitchen --light hall --listen 0.0.0.0:4222",
			wantUser: "User=root",
		},
		{
			name:     "other data dir and user",
			given:    []string{"--data", "/srv/lumen", "--user", "lumen"},
			wantExec: "ExecStart=/usr/local/bin/lumen up --data /srv/lumen",
			wantUser: "User=lumen",
		},
		{
			name:     "spaces, percent and dollar are quoted for systemd",
			given:    []string{"--data", "/srv/my lights/100%$HOME"},
			wantExec: `ExecStart=/usr/local/bin/lumen up --data "/srv/my lights/100%%$$HOME"`,
			wantUser: "User=root",
		},
		{name: "bad light name", given: []string{"--light", "living room"}, wantError: `--light: light name "living room" is not allowed: names are lowercase letters a-z, digits 0-9, '_' and '-': use living_room`},
		{name: "reserved in capitals", given: []string{"--light", "Fleet"}, wantError: "reserved"},
		{name: "reserved light name", given: []string{"--light", "sys"}, wantError: "reserved"},
		{name: "bad user", given: []string{"--user", "a b"}, wantError: `--user "a b"`},
		{name: "unknown flag", given: []string{"--colour", "red"}, wantError: "unknown flag"},
		{name: "stray argument", given: []string{"now"}, wantError: "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"install", "--unit-dir", dir, "--binary", "/usr/local/bin/lumen"}, tt.given...)
			out, err := runService(t, args...)
			path := filepath.Join(dir, "lumen.service")
			if tt.wantError != "" {
				var ue cli.UsageError
				if err == nil || !strings.Contains(err.Error(), tt.wantError) || !errors.As(err, &ue) {
					t.Fatalf("want a usage error with %q, got %v", tt.wantError, err)
				}
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a failed install wrote %s", path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			unit := string(b)
			lines := strings.Split(unit, "\n")
			for _, want := range []string{tt.wantExec, tt.wantUser, "Restart=on-failure", "RestartSec=2", "AmbientCapabilities=",
				"After=network-online.target time-sync.target", "Wants=network-online.target", "WantedBy=multi-user.target"} {
				if !contains(lines, want) {
					t.Errorf("unit has no line %q:\n%s", want, unit)
				}
			}
			if tt.name == "defaults" && unit != wantDefaultUnit {
				t.Errorf("unit:\n%s\nwant:\n%s", unit, wantDefaultUnit)
			}
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("unit file mode: %v %v, want 0644", fi.Mode(), err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("unit dir holds %d entries, want lumen.service alone", len(entries))
			}
			wantOut := "wrote " + path + "\nstart lumen now and at every boot with:\n  systemctl daemon-reload\n  systemctl enable --now lumen\n"
			if out != wantOut {
				t.Errorf("output:\n%s\nwant:\n%s", out, wantOut)
			}
		})
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

func TestServiceInstallPrint(t *testing.T) {
	dir := t.TempDir()
	out, err := runService(t, "install", "--print", "--unit-dir", dir, "--binary", "/usr/local/bin/lumen")
	if err != nil {
		t.Fatal(err)
	}
	if out != wantDefaultUnit {
		t.Errorf("--print wrote:\n%s\nwant:\n%s", out, wantDefaultUnit)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("--print wrote into the unit dir: %v", entries)
	}
}

// Without --binary the unit starts the running binary, by absolute path;
// a relative --data is made absolute, as systemd starts units in /.
func TestServiceInstallRunningBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	t.Chdir(t.TempDir())
	wd, _ := os.Getwd()
	out, err := runService(t, "install", "--print", "--data", "lights")
	if err != nil {
		t.Fatal(err)
	}
	want := "ExecStart=" + daemon.SystemdQuote(exe) + " up --data " + daemon.SystemdQuote(filepath.Join(wd, "lights"))
	if !contains(strings.Split(out, "\n"), want) {
		t.Errorf("want %q in:\n%s", want, out)
	}
}

func TestServiceInstallUnwritableDir(t *testing.T) {
	_, err := runService(t, "install", "--unit-dir", filepath.Join(t.TempDir(), "missing"), "--binary", "/usr/local/bin/lumen")
	if err == nil || !strings.Contains(err.Error(), "cannot write") {
		t.Errorf("want a 'cannot write' error, got %v", err)
	}
}

func TestServiceHelp(t *testing.T) {
	for _, c := range append(newService(&app{}).Commands(), newService(&app{})) {
		if c.Long == "" || c.Example == "" {
			t.Errorf("%s has no Long help or Example", c.CommandPath())
		}
	}
}
