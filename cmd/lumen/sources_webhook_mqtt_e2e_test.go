package main_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// lumen up --http says where the webhooks are, lumen source ls shows a
// webhook source's URL, and --http beyond loopback needs credentials.
// (The webhooks themselves are tested in process in actors/daemon.)
func TestWebhookSourceCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--http", "127.0.0.1:0")
	base := d.Line(t, regexp.MustCompile(`lumen: webhooks on (http://[^/\s]+)/hooks/LIGHT/SOURCE`))
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"door","type":"webhook","store":{"who":"result.who"},"fires":"doorbell"}`))
	res, err := http.Post(base+"/hooks/demo/door", "application/json", strings.NewReader(`{"who":"Ann"}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("POST to the URL the ready line gave: %d", res.StatusCode)
	}
	if out, _ := runCLI(t, d.URL, "source", "ls"); !strings.Contains(out, "door             webhook POST "+base+"/hooks/demo/door") {
		t.Errorf("source ls does not show the webhook's URL:\n%s", out)
	}

	// The HTTP port beyond loopback needs credentials, like --listen.
	out, code := runCLI(t, d.URL, "up", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0")
	if code != 2 || !strings.Contains(out, "without credentials") {
		t.Fatalf("--http 0.0.0.0:0 without credentials: exit %d: %s", code, out)
	}
}
