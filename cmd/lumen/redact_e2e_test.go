package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// A server URL's password is never printed back, in the CLI's errors or
// a daemon's log; at a hub whose Pis are away the CLI says so, not
// "start one with 'lumen up'" (issue 26, item 7).
func TestURLsRedactedAndHubSaysWhatIsTrue(t *testing.T) {
	out, code := runCLI(t, "", "--server", "nats://admin:s3cr3t@127.0.0.1:1", "state")
	if code == 0 || strings.Contains(out, "s3cr3t") || !strings.Contains(out, "nats://admin:xxxxx@127.0.0.1:1") {
		t.Errorf("state at a server with a password: exit %d:\n%s", code, out)
	}

	hubData := t.TempDir()
	creds := addPi(t, hubData, "pia", "kitchen")
	hub := lumentest.StartHub(t, hubData)
	if out, code := runCLI(t, hub.URL, "state"); code == 0 || strings.Contains(out, "lumen up'") || !strings.Contains(out, "is a hub") || !strings.Contains(out, "pia") {
		t.Errorf("state at a hub with its Pi away: exit %d:\n%s", code, out)
	}
	// ls lists the Pi's lights as unreachable (item 18).
	if out, code := runCLI(t, hub.URL, "ls"); code != 0 || strings.Contains(out, "lumen up'") || !strings.Contains(out, "kitchen  unreachable: its Pi pia is disconnected") {
		t.Errorf("ls at a hub with its Pi away: exit %d:\n%s", code, out)
	}

	// The Pi logs where it joins; the password in --hub is not shown.
	_, leafPort, _ := strings.Cut(hub.Leaf, ":")
	pi := startDaemon(t, t.TempDir(), "--light", "kitchen", "--hub", "tls://pia:s3cr3t@localhost:"+leafPort, "--creds", creds)
	lumentest.WaitFor(t, 30*time.Second, "the Pi's line about the hub", func() bool {
		return strings.Contains(pi.Logs(), "the house at") || strings.Contains(pi.Logs(), "the hub at")
	})
	if logs := pi.Logs(); strings.Contains(logs, "s3cr3t") {
		t.Errorf("the Pi's log shows the password:\n%s", logs)
	}
}
