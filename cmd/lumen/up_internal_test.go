package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/nats/broker"
)

// lumen up reads listen:, http:, mqtt:, user: and password: from
// lumen.yaml too, and refuses a listener beyond loopback without
// credentials, or half of them, before starting anything (exit 2). What
// it prints names the flags and lumen.yaml's keys, never a Go field.
func TestUpRefusesOpenListeners(t *testing.T) {
	const creds = "set --user and --password (user: and password: in lumen.yaml)"
	tests := []struct {
		name, yaml string
		args       []string
		want       string
	}{
		{"--listen flag", "", []string{"--listen", "0.0.0.0:4222"},
			"lumen: --listen 0.0.0.0:4222 would let other machines in without credentials: " + creds + ", or use 127.0.0.1:4222 to accept this machine only\n"},
		{"listen: in lumen.yaml", "listen: 0.0.0.0:4222\n", nil, "lumen: --listen 0.0.0.0:4222 would let other machines in without credentials: " + creds},
		{"--http flag", "", []string{"--http", "0.0.0.0:0"}, "lumen: --http 0.0.0.0:0 would let other machines in without credentials: " + creds},
		{"http: in lumen.yaml", "http: 0.0.0.0:0\n", nil, "lumen: --http 0.0.0.0:0 would let other machines in without credentials: " + creds},
		{"mqtt: in lumen.yaml", "mqtt: 0.0.0.0:0\n", nil, "lumen: --mqtt 0.0.0.0:0 would let other machines in without credentials: " + creds},
		{"--user without --password", "", []string{"--user", "ann", "--listen", "0.0.0.0:4222"},
			"lumen: --user is given but --password is not: give both (user: and password: in lumen.yaml), or neither\n"},
		{"password: without user:", "password: pw\n", nil, "lumen: --password is given but --user is not"},
		{"--user of Lumen's own", "", []string{"--user", "lumen-daemon", "--password", "pw"},
			"lumen: --user \"lumen-daemon\" is a name Lumen keeps for its own connections: pick another\n"},
		{"negative --max-bytes", "", []string{"--max-bytes", "-1"}, "lumen: --max-bytes -1 is negative: give the journal's size budget in bytes (max_bytes: in lumen.yaml)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.yaml != "" {
				if err := os.WriteFile(filepath.Join(dir, "lumen.yaml"), []byte(tt.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// A case that sets no listen address of its own gets a free
			// port on loopback.
			args := []string{"up", "--data", dir, "--hardware", "sim"}
			if !slices.Contains(tt.args, "--listen") && !strings.Contains(tt.yaml, "listen:") {
				args = append(args, "--listen", "127.0.0.1:0")
			}
			// A lumen up that starts after all stops when ctx ends.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var out, errOut bytes.Buffer
			code := run(ctx, append(args, tt.args...), strings.NewReader(""), &out, &errOut)
			if code != 2 || !strings.Contains(errOut.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q, want 2 and %q", code, errOut.String(), tt.want)
			}
			for _, goName := range []string{"User", "Password", "DataDir", "MaxBytes", "Config.", "broker:"} {
				if strings.Contains(errOut.String(), goName) {
					t.Errorf("stderr %q names %q", errOut.String(), goName)
				}
			}
		})
	}
}

// A port that is taken fails lumen up at once (exit 1) with which flag
// gave the address and what to do. Another lumen up on the same --data
// is found by the data directory's lock first, before any port.
func TestUpPortTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	hint := ": the port is taken (address already in use), by another lumen up or another program: stop it, or give this one another port; 127.0.0.1:0 picks a free one, which lumen up prints once ready\n"

	busy := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	other, err := broker.Start(ctx, broker.Config{DataDir: busy, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Shutdown()

	tests := []struct {
		name string
		args []string
		want string // a line of stderr
	}{
		{"--listen", []string{"--listen", addr}, "lumen: --listen " + addr + hint},
		{"--mqtt", []string{"--listen", "127.0.0.1:0", "--mqtt", addr}, "lumen: --mqtt " + addr + hint},
		{"--http", []string{"--listen", "127.0.0.1:0", "--http", addr}, "lumen: --http " + addr + hint},
		{"--data in use", []string{"--data", busy, "--listen", addr}, "lumen: --data " + busy + " is in use by another lumen (lumen up, or lumen replay --data): stop it, or give this one another --data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"up", "--data", t.TempDir(), "--hardware", "sim", "--clock", "trust"}, tt.args...)
			code := run(ctx, args, strings.NewReader(""), &out, &errOut)
			if code != 1 || !strings.Contains(errOut.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q, want 1 and %q", code, errOut.String(), tt.want)
			}
			if strings.Contains(out.String(), "ready") {
				t.Fatalf("stdout %q", out.String())
			}
		})
	}
}
