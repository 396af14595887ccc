package main_test

import (
	"context"
	"encoding/json"

	"github.com/lumen-home/lumen/internal/lumentest"

	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// The end-to-end tests run the built binary through lumentest, shared
// with the benchmarks.
type daemon = lumentest.Daemon

type syncBuffer = lumentest.Buffer

func lumenBin(t testing.TB) string { return lumentest.Bin(t) }

func startDaemon(t testing.TB, dir string, args ...string) *daemon {
	t.Helper()
	return lumentest.Start(t, dir, args...)
}

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	return lumentest.Connect(t, url)
}

// reply is a decoded command reply with its error headers.
type reply struct {
	Code    string // Nats-Service-Error-Code, "" on success
	Header  string // Nats-Service-Error
	Raw     []byte
	Body    map[string]any
	Outputs []map[string]any
}

func request(t testing.TB, nc *nats.Conn, subj string, body string) reply {
	t.Helper()
	m, err := nc.Request(subj, []byte(body), 30*time.Second)
	if err != nil {
		t.Fatalf("request %s %s: %v", subj, body, err)
	}
	r := reply{Raw: m.Data}
	if m.Header != nil {
		r.Code, r.Header = m.Header.Get(micro.ErrorCodeHeader), m.Header.Get(micro.ErrorHeader)
	}
	if err := json.Unmarshal(m.Data, &r.Body); err != nil {
		t.Fatalf("reply to %s is not JSON: %s", subj, m.Data)
	}
	if outs, ok := r.Body["outputs"].([]any); ok {
		for _, o := range outs {
			r.Outputs = append(r.Outputs, o.(map[string]any))
		}
	}
	return r
}

func mustOK(t testing.TB, r reply) reply {
	t.Helper()
	if r.Code != "" || r.Body["ok"] != true {
		t.Fatalf("want ok, got code %q: %s", r.Code, r.Raw)
	}
	return r
}

// runCLI runs the lumen binary as a client and returns its output and
// exit status.
func runCLI(t testing.TB, url string, args ...string) (string, int) {
	t.Helper()
	return runCLIEnv(t, url, nil, args...)
}

// runCLIEnv is runCLI with more environment variables (KEY=VALUE).
func runCLIEnv(t testing.TB, url string, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, lumenBin(t), args...)
	cmd.Env = append(append(os.Environ(), "NATS_URL="+url, "LUMEN_LIGHT="), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run lumen %v: %v", args, err)
	}
	return string(out), code
}
