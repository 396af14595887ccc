package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// fillDisk writes a file on disk until its file system is full, and
// returns its path.
func fillDisk(t *testing.T, disk string) string {
	t.Helper()
	path := filepath.Join(disk, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for buf := make([]byte, 64<<10); ; {
		if _, err := f.Write(buf); err != nil {
			return path // ENOSPC
		}
	}
}

var budgetLine = regexp.MustCompile(`lumen: journal budget ([0-9.]+ [KMG]iB)`)

// TestDiskFull: on a small disk (a 64 MiB tmpfs, less than the default
// budget) lumen up starts without --max-bytes and says what budget it
// chose; when the disk fills up every change is refused at once with 507
// and a sentence that says so and what to do, while reads and the LED
// keep working; once space is freed the light carries on without a
// restart, the journal replays exactly, and the budget chosen at the
// first start is kept.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	disk := lumentest.Tmpfs(t, 64<<20)
	data := filepath.Join(disk, "data")
	d := startDaemon(t, data, "--light", "demo")
	if got := d.Line(t, budgetLine); got != "48.0 MiB" {
		t.Errorf("start-up chose a budget of %s on a 64 MiB disk, want 48.0 MiB (3/4 of it):\n%s", got, d.Logs())
	}
	var kept struct {
		MaxBytes int64 `json:"max_bytes"`
	}
	if b, err := os.ReadFile(filepath.Join(data, "budget.json")); err != nil || json.Unmarshal(b, &kept) != nil || kept.MaxBytes != 48<<20 {
		t.Fatalf("budget.json: %s (%v), want max_bytes 48 MiB", b, err)
	}
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"red"}`))

	filler := fillDisk(t, disk)
	for _, c := range []struct{ verb, body string }{
		{"fire", `{"transition":"button_click"}`},
		{"set_state", `{"name":"green"}`},
		{"set_var", `{"name":"x","value":1}`},
		{"create_state", `{"name":"pink","r":255,"g":100,"b":100}`},
		{"button", `{"edge":"down"}`},
	} {
		r := request(t, nc, "lumen.demo.cmd."+c.verb, c.body)
		if r.Code != "507" || !strings.HasPrefix(r.Header, "the disk is full") || !strings.Contains(r.Header, "free some space") ||
			r.Body["code"] != float64(507) {
			t.Errorf("%s on a full disk: code %q, %q %s; want 507 saying the disk is full and what to do", c.verb, r.Code, r.Header, r.Raw)
		}
	}
	if out, code := runCLI(t, d.URL, "fire", "--light", "demo", "button_click"); code != 1 || !strings.Contains(out, "the disk is full") {
		t.Errorf("lumen fire on a full disk: exit %d\n%s", code, out)
	}
	if g := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)); g.Body["state"] != "red" {
		t.Errorf("get on a full disk: state %v, want red", g.Body["state"])
	}
	if led := mustOK(t, request(t, nc, "lumen.demo.cmd.led", `{}`)); led.Body["state"] != "red" {
		t.Errorf("the LED on a full disk shows %v, want red", led.Body["state"])
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if r := mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`)); r.Body["state"] != "green" {
		t.Errorf("a click from red once space is freed: %v, want green", r.Body["state"])
	}
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_var", `{"name":"x","value":2}`))
	if led := mustOK(t, request(t, nc, "lumen.demo.cmd.led", `{}`)); led.Body["state"] != "green" {
		t.Errorf("the LED shows %v, want green", led.Body["state"])
	}
	d.Stop()
	if out, code := runCLI(t, "", "replay", "--data", data, "--light", "demo", "--verify"); code != 0 {
		t.Fatalf("replay --verify after the disk was full: exit %d\n%s", code, out)
	}

	// The next start keeps the budget, though the disk has less free now.
	fillDisk(t, disk)
	d = startDaemon(t, data, "--light", "demo")
	if got := d.Line(t, budgetLine); got != "48.0 MiB" || !strings.Contains(d.Logs(), "chosen at the first start") {
		t.Errorf("a second start on a fuller disk chose %s, want the kept 48.0 MiB:\n%s", got, d.Logs())
	}
	nc = connect(t, d.URL)
	if g := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)); g.Body["state"] != "green" {
		t.Errorf("after a restart on a full disk: state %v, want green", g.Body["state"])
	}
	if r := request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`); r.Code != "507" {
		t.Errorf("fire after a restart on a full disk: %q %s, want 507", r.Code, r.Raw)
	}
}
