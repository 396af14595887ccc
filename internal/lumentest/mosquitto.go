package lumentest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Mosquitto is a real Mosquitto broker (Debian's, installed by the
// Taskfile's debs task) on a loopback port, for the Home Assistant
// bridge's tests: the broker Home Assistant users run.
type Mosquitto struct {
	tb   testing.TB
	Addr string // 127.0.0.1:PORT
	conf string
	cmd  *exec.Cmd
	logs *Buffer
}

// mosquittoBin finds the broker; the suite needs it, so a machine
// without it fails rather than skip.
func mosquittoBin(tb testing.TB) string {
	tb.Helper()
	for _, p := range []string{os.Getenv("LUMEN_MOSQUITTO"), "mosquitto", "/usr/sbin/mosquitto"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	tb.Fatal("no mosquitto: install Debian's mosquitto (the Taskfile's debs task does), or set LUMEN_MOSQUITTO")
	return ""
}

// StartMosquitto starts a broker on a free loopback port, stopped when
// tb ends. With user and password, it asks every client for them.
func StartMosquitto(tb testing.TB, user, password string) *Mosquitto {
	tb.Helper()
	dir := tb.TempDir()
	m := &Mosquitto{tb: tb, Addr: FreeAddr(tb), conf: filepath.Join(dir, "mosquitto.conf"), logs: &Buffer{}}
	_, port, _ := net.SplitHostPort(m.Addr)
	conf := fmt.Sprintf("listener %s 127.0.0.1\npersistence false\nlog_dest stderr\n", port)
	if os.Geteuid() == 0 {
		// As root, mosquitto would drop to its own user before reading
		// the password file in the test's private directory.
		conf += "user root\n"
	}
	if user == "" {
		conf += "allow_anonymous true\n"
	} else {
		pw := filepath.Join(dir, "passwd")
		if out, err := exec.Command("mosquitto_passwd", "-c", "-b", pw, user, password).CombinedOutput(); err != nil {
			tb.Fatalf("mosquitto_passwd (Debian's mosquitto has it): %v %s", err, out)
		}
		conf += "allow_anonymous false\npassword_file " + pw + "\n"
	}
	if err := os.WriteFile(m.conf, []byte(conf), 0o600); err != nil {
		tb.Fatal(err)
	}
	m.Start()
	tb.Cleanup(m.Stop)
	return m
}

// Start starts the broker again on its port (after Stop): with nothing
// retained, as a broker that lost its store.
func (m *Mosquitto) Start() {
	m.tb.Helper()
	m.cmd = exec.Command(mosquittoBin(m.tb), "-c", m.conf)
	m.cmd.Stdout, m.cmd.Stderr = m.logs, m.logs
	if err := m.cmd.Start(); err != nil {
		m.tb.Fatal(err)
	}
	if !Within(10*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", m.Addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		m.tb.Fatalf("mosquitto does not listen on %s:\n%s", m.Addr, m.Logs())
	}
}

// Stop stops the broker.
func (m *Mosquitto) Stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	_ = m.cmd.Process.Kill()
	_ = m.cmd.Wait()
	m.cmd = nil
}

// URL is mqtt://ADDR.
func (m *Mosquitto) URL() string { return "mqtt://" + m.Addr }

// Logs is what the broker said.
func (m *Mosquitto) Logs() string { return strings.TrimSpace(m.logs.String()) }
