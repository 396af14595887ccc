package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// The end-to-end tests run the built binary: $LUMEN_BIN (the Taskfile
// builds it once for every suite), or one built here for this run.
var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func lumenBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if p := os.Getenv("LUMEN_BIN"); p != "" {
			binPath = p
			return
		}
		dir, err := os.MkdirTemp("", "lumen-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "lumen")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// daemon is a running `lumen up`.
type daemon struct {
	t    testing.TB
	cmd  *exec.Cmd
	URL  string
	Data string
	logs *syncBuffer
	done chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startDaemon runs `lumen up --data dir --listen 127.0.0.1:0 args…` and
// waits for its ready line.
func startDaemon(t testing.TB, dir string, args ...string) *daemon {
	t.Helper()
	full := append([]string{"up", "--data", dir, "--listen", "127.0.0.1:0"}, args...)
	cmd := exec.Command(lumenBin(t), full...)
	cmd.Env = append(os.Environ(), "NATS_URL=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{t: t, cmd: cmd, Data: dir, logs: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = d.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(d.logs, line)
			if u, ok := strings.CutPrefix(line, "lumen: ready "); ok {
				select {
				case ready <- u:
				default:
				}
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(d.done) }()
	select {
	case d.URL = <-ready:
	case <-d.done:
		t.Fatalf("lumen up exited before ready:\n%s", d.logs)
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("lumen up not ready after 60s:\n%s", d.logs)
	}
	t.Cleanup(func() { d.Stop() })
	return d
}

// Stop ends the daemon gracefully (SIGTERM).
func (d *daemon) Stop() {
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
		d.t.Errorf("lumen up did not stop on SIGTERM:\n%s", d.logs)
	}
}

// Kill ends the daemon with SIGKILL, as a power cut would.
func (d *daemon) Kill() {
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, lumenBin(t), args...)
	cmd.Env = append(os.Environ(), "NATS_URL="+url)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run lumen %v: %v", args, err)
	}
	return string(out), code
}
