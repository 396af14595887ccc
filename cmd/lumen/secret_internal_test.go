package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/plugins/secrets"
)

// runSecret runs 'lumen secret ARGS…' in process with stdin and returns its
// standard output.
func runSecret(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := newSecret(&app{Term: &cli.Term{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr}})
	cmd.SetArgs(args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return stdout.String(), err
}

func isUsage(err error) bool {
	var ue cli.UsageError
	return errors.As(err, &ue)
}

func TestSecretCommands(t *testing.T) {
	data := t.TempDir()
	const value = "owm-0123456789abcdef"

	out, err := runSecret(t, value+"\n", "set", "OPENWEATHER_KEY", "--host", "API.openweathermap.org", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "OPENWEATHER_KEY set for api.openweathermap.org") || strings.Contains(out, value) {
		t.Fatalf("set printed %q", out)
	}
	if _, err := runSecret(t, "hue-token", "set", "HUE", "--host", "192.168.1.20", "--host", "hue.local:8443", "--data", data); err != nil {
		t.Fatal(err)
	}

	// The value is stored without the trailing newline, readable by the
	// daemon's store.
	st, err := secrets.Open(filepath.Join(data, "secrets"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Substitute("api.openweathermap.org:443", "{{secret:OPENWEATHER_KEY}}"); err != nil || got != value {
		t.Fatalf("stored value: %q, %v", got, err)
	}
	fi, err := os.Stat(filepath.Join(data, "secrets", secrets.FileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secrets file: %v, %v", fi, err)
	}

	out, err = runSecret(t, "", "ls", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") ||
		!strings.Contains(lines[1], "HUE") || !strings.Contains(lines[1], "192.168.1.20,hue.local:8443") ||
		!strings.Contains(lines[2], "OPENWEATHER_KEY") || !strings.Contains(lines[2], "api.openweathermap.org") {
		t.Fatalf("ls printed:\n%s", out)
	}
	if strings.Contains(out, value) || strings.Contains(out, "hue-token") {
		t.Fatalf("ls printed a value:\n%s", out)
	}

	out, err = runSecret(t, "", "ls", "--json", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	var infos []secrets.Info
	if err := json.Unmarshal([]byte(out), &infos); err != nil || len(infos) != 2 || strings.Contains(out, value) {
		t.Fatalf("ls --json printed %s (%v)", out, err)
	}

	if out, err = runSecret(t, "", "rm", "HUE", "--data", data); err != nil || !strings.Contains(out, "HUE removed") {
		t.Fatalf("rm: %q, %v", out, err)
	}
	if _, err := runSecret(t, "", "rm", "HUE", "--data", data); !errors.Is(err, secrets.ErrNotFound) || isUsage(err) {
		t.Fatalf("rm again: %v, want ErrNotFound, exit 1", err)
	}
	if out, _ = runSecret(t, "", "ls", "--data", data); strings.Contains(out, "HUE") {
		t.Fatalf("ls after rm:\n%s", out)
	}
}

func TestSecretEmptyData(t *testing.T) {
	data := t.TempDir()
	out, err := runSecret(t, "", "ls", "--data", data)
	if err != nil || !strings.Contains(out, "no secrets") {
		t.Fatalf("ls: %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(data, "secrets")); !os.IsNotExist(err) {
		t.Fatalf("ls created the secrets directory: %v", err)
	}
	if _, err := runSecret(t, "", "rm", "NOPE", "--data", data); err == nil || isUsage(err) {
		t.Fatalf("rm on empty data: %v", err)
	}
}

func TestSecretErrors(t *testing.T) {
	tests := []struct {
		name      string
		stdin     string
		given     []string
		wantUsage bool
		want      string // substring of the error
	}{
		{name: "no name", given: []string{"set", "--host", "example.com"}, wantUsage: true, want: "accepts 1 arg"},
		{name: "value as an argument", given: []string{"set", "KEY", "the-value", "--host", "example.com"}, wantUsage: true, want: "accepts 1 arg"},
		{name: "value as a flag", given: []string{"set", "KEY", "--value", "the-value", "--host", "example.com"}, wantUsage: true, want: "unknown flag"},
		{name: "lower-case name", stdin: "abcdef", given: []string{"set", "key", "--host", "example.com"}, wantUsage: true, want: "upper-case"},
		{name: "no host", stdin: "abcdef", given: []string{"set", "KEY"}, wantUsage: true, want: "--host"},
		{name: "URL for a host", stdin: "abcdef", given: []string{"set", "KEY", "--host", "https://example.com/"}, wantUsage: true, want: "without scheme"},
		{name: "empty stdin", stdin: "", given: []string{"set", "KEY", "--host", "example.com"}, wantUsage: true, want: "no value"},
		{name: "two lines", stdin: "abcdef\nghijkl\n", given: []string{"set", "KEY", "--host", "example.com"}, wantUsage: true, want: "control character"},
		{name: "rm bad name", given: []string{"rm", "key"}, wantUsage: true, want: "upper-case"},
		{name: "ls with an argument", given: []string{"ls", "KEY"}, wantUsage: true, want: "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := t.TempDir()
			_, err := runSecret(t, tt.stdin, append(tt.given, "--data", data)...)
			if err == nil || isUsage(err) != tt.wantUsage || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v (usage %v), want usage %v saying %q", err, isUsage(err), tt.wantUsage, tt.want)
			}
			if _, err := os.Stat(filepath.Join(data, "secrets", secrets.FileName)); !os.IsNotExist(err) {
				t.Fatal("a failed set wrote the secrets file")
			}
		})
	}
}

func TestSecretRefusesWorldReadable(t *testing.T) {
	data := t.TempDir()
	if _, err := runSecret(t, "abcdef", "set", "KEY", "--host", "example.com", "--data", data); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(data, "secrets", secrets.FileName)
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runSecret(t, "", "ls", "--data", data)
	if !errors.Is(err, secrets.ErrUnsafePermissions) || isUsage(err) || !strings.Contains(err.Error(), "chmod 600 "+file) {
		t.Fatalf("ls on a world-readable file: %v", err)
	}
}

// lumen secret works on a data directory: --server would not reach the
// daemon's, so it is refused rather than ignored.
func TestSecretRefusesServer(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"secret", "ls", "--server", "nats://127.0.0.1:1", "--data", t.TempDir()}, strings.NewReader(""), &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "not over --server") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}
