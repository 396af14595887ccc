package main_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// lumen up serves the page: it says where after the ready line, and the
// page has the light in it. The default port taken (another lumen on the
// machine) is one line in the log, not a failure; an --http port given
// and taken is a failure that names the flag.
func TestPageLine(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--http", "127.0.0.1:0")
	page := d.Page(t)
	if i, j := strings.Index(d.Logs(), "lumen: ready "), strings.Index(d.Logs(), "lumen: page "); i < 0 || j < i {
		t.Errorf("the page line is not after the ready line:\n%s", d.Logs())
	}
	res, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `data-light="demo"`) {
		t.Errorf("GET %s: %d\n%s", page, res.StatusCode, b)
	}
}

func TestDefaultHTTPPortTaken(t *testing.T) {
	// Hold the default port (or find it held already: taken either way).
	if ln, err := net.Listen("tcp", "127.0.0.1:8642"); err == nil {
		defer ln.Close()
	}
	d := startDaemon(t, t.TempDir(), "--http", "auto")
	if !strings.Contains(d.Logs(), "127.0.0.1:8642 is taken") || strings.Contains(d.Logs(), "lumen: page ") {
		t.Errorf("the default port taken:\n%s", d.Logs())
	}
	out, code := runCLI(t, "", "up", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--http", "127.0.0.1:8642")
	if code == 0 || !strings.Contains(out, "--http") {
		t.Errorf("an --http port given and taken: exit %d\n%s", code, out)
	}
}
