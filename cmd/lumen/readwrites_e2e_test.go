package main_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Once define_tool is answered, every run_tool sees the new code: the
// tool manager reads the light's definitions before it runs a tool the
// light changed since it last read them.
func TestRunToolReadsItsWrites(t *testing.T) {
	needGuest(t)
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)

	stale := 0
	for i := range 30 {
		defineTool(t, nc, map[string]any{"name": "n", "code": fmt.Sprintf("return %d;", i)})
		r := mustOK(t, runTool(t, nc, "n", ""))
		if got := fmt.Sprint(r.Body["result"]); got != fmt.Sprint(i) {
			stale++
			t.Errorf("run %d after its define_tool: result %s", i, r.Raw)
		}
	}
	if stale > 0 {
		t.Fatalf("%d of 30 runs ran an older definition", stale)
	}
}

// A light's own get_weather (the seed's example defines one) wins over
// the built-in after every redefinition, not every other one.
func TestOwnGetWeatherAfterRedefinition(t *testing.T) {
	needGuest(t)
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	for i := range 6 {
		defineTool(t, nc, map[string]any{"name": "get_weather", "code": fmt.Sprintf("return {own: %d};", i)})
		r := runTool(t, nc, "get_weather", `{"location":"auto"}`)
		if !strings.Contains(string(r.Raw), fmt.Sprintf(`"own":%d`, i)) {
			t.Fatalf("redefinition %d of the light's own get_weather: run_tool answered %s", i, r.Raw)
		}
	}
}

// Once create_source is answered, its webhook takes a POST: never a 404.
func TestWebhookReadsItsWrites(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--http", "127.0.0.1:0")
	base := d.Line(t, regexp.MustCompile(`lumen: webhooks on (http://[^/\s]+)/hooks/LIGHT/SOURCE`))
	nc := connect(t, d.URL)

	missed := 0
	for i := range 50 {
		name := fmt.Sprintf("hook%d", i)
		mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", fmt.Sprintf(`{"name":%q,"type":"webhook","fires":"rang"}`, name)))
		res, err := http.Post(base+"/hooks/demo/"+name, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			missed++
			t.Errorf("POST right after create_source %s: %s", name, res.Status)
		}
		// Deleted is gone as soon: the next POST is refused.
		mustOK(t, request(t, nc, "lumen.demo.cmd.delete_source", fmt.Sprintf(`{"name":%q}`, name)))
		res, err = http.Post(base+"/hooks/demo/"+name, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			missed++
			t.Errorf("POST right after delete_source %s: %s, want 404", name, res.Status)
		}
	}
	if missed > 0 {
		t.Fatalf("%d of 100 POSTs did not see the source as just created or deleted", missed)
	}
}

// The seed's data-source test: a poll source that only fires is
// accepted, and fires its transition on its interval.
func TestPollSourceThatOnlyFires(t *testing.T) {
	needGuest(t)
	t.Setenv("LUMEN_SOURCE_MIN_INTERVAL_MS", "100")
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	events := subscribeEvents(t, nc, "demo")

	defineTool(t, nc, map[string]any{"name": "mock_tool", "code": "return 1;"})
	mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"off","on":"test_updated","to":"red"}]}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"test","interval_ms":100,"fetch":{"tool":"mock_tool"},"fires":"test_updated"}`))
	waitEvent(t, events, "lumen.demo.evt.out.state", `"to":"red"`)
	if g := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)); g.Body["state"] != "red" {
		t.Fatalf("state %v, want red", g.Body["state"])
	}
}

// Once define_function is answered, a state that calls it is shown with
// it: the LED the led verb reports right after set_state has the color
// the newest function gives.
func TestFunctionReadsItsWrites(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"fn","r":"level()","g":0,"b":0}`))
	stale := 0
	for i := range 30 {
		mustOK(t, request(t, nc, "lumen.demo.cmd.define_function", fmt.Sprintf(`{"name":"level","code":"return %d;"}`, 10+i)))
		mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"off"}`))
		mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"fn"}`))
		r := mustOK(t, request(t, nc, "lumen.demo.cmd.led", `{}`))
		if !strings.Contains(string(r.Raw), `"state":"fn"`) || !strings.Contains(string(r.Raw), fmt.Sprintf(`"r":%d,`, 10+i)) {
			stale++
			t.Errorf("led right after define_function %d and set_state: %s", 10+i, r.Raw)
		}
	}
	if stale > 0 {
		t.Fatalf("%d of 30 reads of the LED were stale", stale)
	}
}
