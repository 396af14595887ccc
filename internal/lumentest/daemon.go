// Package lumentest runs the built lumen binary for end-to-end tests and
// benchmarks: one binary per test process, daemons started on a data dir
// and stopped (or killed) at the test's end.
package lumentest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timeouts that keep a broken daemon from hanging a test.
const (
	ReadyTimeout = 60 * time.Second
	StopTimeout  = 20 * time.Second
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Bin returns the lumen binary: $LUMEN_BIN (the Taskfile builds it once
// for every suite), or one built for this test process.
func Bin(tb testing.TB) string {
	tb.Helper()
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
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/lumen-home/lumen/cmd/lumen").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build ./cmd/lumen: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return binPath
}

// Buffer is an io.Writer safe for concurrent use, kept for failure
// messages.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Logf writes one line, for the Logf of a library's config.
func (l *Buffer) Logf(format string, args ...any) {
	fmt.Fprintf(l, strings.TrimSuffix(format, "\n")+"\n", args...)
}

// Contains reports whether s was written.
func (l *Buffer) Contains(s string) bool { return strings.Contains(l.String(), s) }

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Daemon is a running `lumen up` (or `lumen hub`).
type Daemon struct {
	URL  string // from its ready line
	Leaf string // a hub's leaf address, from its ready line
	Data string
	cmd  *exec.Cmd
	logs *Buffer
	done chan struct{} // closed when the process has exited
}

// Logs is everything the daemon printed so far.
func (d *Daemon) Logs() string { return d.logs.String() }

// Exited is closed once the daemon's process has ended.
func (d *Daemon) Exited() <-chan struct{} { return d.done }

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Launch runs `lumen up --data dir --listen 127.0.0.1:0 --http off args…`
// and waits for its ready line (a test that wants HTTP gives --http
// 127.0.0.1:0). The caller stops it.
func Launch(bin, dir string, args ...string) (*Daemon, error) {
	return LaunchEnv(bin, dir, nil, args...)
}

// LaunchEnv is Launch with more environment variables (KEY=VALUE), e.g.
// the daemon's TZ.
func LaunchEnv(bin, dir string, env []string, args ...string) (*Daemon, error) {
	return launch(bin, dir, env, append([]string{"up", "--data", dir, "--listen", "127.0.0.1:0", "--http", "off"}, args...), "lumen: ready ")
}

// LaunchHub runs `lumen hub --data dir --listen 127.0.0.1:0 --leaf-listen
// 127.0.0.1:0 args…` and waits for its ready line. The caller stops it.
func LaunchHub(bin, dir string, args ...string) (*Daemon, error) {
	return launch(bin, dir, nil, append([]string{"hub", "--data", dir, "--listen", "127.0.0.1:0", "--leaf-listen", "127.0.0.1:0"}, args...), "lumen: hub ready ")
}

// launch runs the binary with full and waits for the line starting with
// ready: the URL follows, and for a hub "leaf HOST:PORT".
func launch(bin, dir string, env, full []string, readyPrefix string) (*Daemon, error) {
	cmd := exec.Command(bin, full...)
	// The developer's agent settings must not reach test daemons: a test
	// configures the agent with flags, or checks that it is off.
	cmd.Env = append(os.Environ(), "NATS_URL=", "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "LUMEN_MODEL=", "LUMEN_HA_PASSWORD=")
	if os.Getenv("LUMEN_PLUGIN_CACHE") == "" {
		// Every daemon of a test run shares one compiled tool engine.
		cmd.Env = append(cmd.Env, "LUMEN_PLUGIN_CACHE="+sharedPluginCache())
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = childAttr()
	// Wait returns soon after the process exits even if something it
	// started still holds its output open.
	cmd.WaitDelay = 5 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	d := &Daemon{cmd: cmd, Data: dir, logs: &Buffer{}, done: make(chan struct{})}
	cmd.Stderr = d.logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(d.logs, line)
			if u, ok := strings.CutPrefix(line, readyPrefix); ok {
				select {
				case ready <- u:
				default:
				}
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(d.done) }()
	select {
	case u := <-ready:
		d.URL, d.Leaf, _ = strings.Cut(u, " leaf ")
		return d, nil
	case <-d.done:
		return nil, fmt.Errorf("lumen %s exited before ready:\n%s", full[0], d.logs)
	case <-time.After(ReadyTimeout):
		d.Kill()
		return nil, fmt.Errorf("lumen %s not ready after %v:\n%s", full[0], ReadyTimeout, d.logs)
	}
}

// Start launches a daemon that is stopped when tb ends.
func Start(tb testing.TB, dir string, args ...string) *Daemon {
	tb.Helper()
	return StartEnv(tb, dir, nil, args...)
}

// StartEnv is Start with more environment variables (KEY=VALUE).
func StartEnv(tb testing.TB, dir string, env []string, args ...string) *Daemon {
	tb.Helper()
	return stopAtEnd(tb)(LaunchEnv(Bin(tb), dir, env, args...))
}

// StartHub launches a hub that is stopped when tb ends.
func StartHub(tb testing.TB, dir string, args ...string) *Daemon {
	tb.Helper()
	return stopAtEnd(tb)(LaunchHub(Bin(tb), dir, args...))
}

func stopAtEnd(tb testing.TB) func(*Daemon, error) *Daemon {
	return func(d *Daemon, err error) *Daemon {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() {
			if err := d.Stop(); err != nil {
				tb.Error(err)
			}
		})
		return d
	}
}

// Stop ends the daemon with SIGTERM, and SIGKILL if it does not exit in
// time (reported as an error).
func (d *Daemon) Stop() error {
	select {
	case <-d.done:
		return nil
	default:
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
		return nil
	case <-time.After(StopTimeout):
		d.Kill()
		return fmt.Errorf("lumen up did not stop within %v of SIGTERM:\n%s", StopTimeout, d.logs)
	}
}

// Kill ends the daemon with SIGKILL, as a power cut would, and waits.
func (d *Daemon) Kill() {
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

// sharedPluginCache is the repository's .cache/plugins/compiled, which the
// plugins package's tests use too.
func sharedPluginCache() string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", ".cache", "plugins", "compiled")
	// It exists before the first daemon starts, so that the daemons
	// starting together on a fresh clone wait for one compile
	// (plugins' cache lock) rather than each running its own.
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

// Line waits for a line of the daemon's output that re matches, and
// returns re's first group (the address in "lumen: page http://…/").
func (d *Daemon) Line(tb testing.TB, re *regexp.Regexp) string {
	tb.Helper()
	// The lines that tell addresses follow the ready line at once.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := re.FindStringSubmatch(d.Logs()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no line %s from lumen:\n%s", re, d.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var pageLine = regexp.MustCompile(`lumen: page (http://\S+/)\n`)

// Page is the address of the daemon's page, from the line after ready.
func (d *Daemon) Page(tb testing.TB) string {
	tb.Helper()
	return d.Line(tb, pageLine)
}

// FreeAddr is a loopback host:port whose port is free now: a daemon
// started again on it keeps the address its clients dial.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
