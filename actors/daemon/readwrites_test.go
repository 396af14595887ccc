package daemon_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// A client reads its writes: once a verb that changes a definition is
// answered, the next request sees the change.

// defineTool sends def to define_tool on the demo light.
func defineTool(t *testing.T, nc *nats.Conn, def map[string]any) {
	t.Helper()
	b, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, nc, messages.VerbDefineTool, string(b))
}

// runTool runs the demo light's tool name with args ("" for none).
func runTool(t *testing.T, nc *nats.Conn, name, args string) ([]byte, string) {
	t.Helper()
	if args == "" {
		args = "{}"
	}
	return request(t, nc, messages.VerbRunTool, fmt.Sprintf(`{"name":%q,"args":%s}`, name, args))
}

// Once define_tool is answered, every run_tool sees the new code: the
// tool manager reads the light's definitions before it runs a tool the
// light changed since it last read them.
func TestRunToolReadsItsWrites(t *testing.T) {
	lumentest.NeedGuest(t)
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	stale := 0
	for i := range 30 {
		defineTool(t, nc, map[string]any{"name": "n", "code": fmt.Sprintf("return %d;", i)})
		body, code := runTool(t, nc, "n", "")
		var r struct {
			OK     bool            `json:"ok"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(body, &r); err != nil || code != "" || !r.OK {
			t.Fatalf("run %d: %s %s", i, code, body)
		}
		if string(r.Result) != fmt.Sprint(i) {
			stale++
			t.Errorf("run %d after its define_tool: %s", i, body)
		}
	}
	if stale > 0 {
		t.Fatalf("%d of 30 runs ran an older definition", stale)
	}
}

// A light's own get_weather (the seed's example defines one) wins over
// the built-in after every redefinition, not every other one.
func TestOwnGetWeatherAfterRedefinition(t *testing.T) {
	lumentest.NeedGuest(t)
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	for i := range 6 {
		defineTool(t, nc, map[string]any{"name": "get_weather", "code": fmt.Sprintf("return {own: %d};", i)})
		if body, _ := runTool(t, nc, "get_weather", `{"location":"auto"}`); !strings.Contains(string(body), fmt.Sprintf(`"own":%d`, i)) {
			t.Fatalf("redefinition %d of the light's own get_weather: run_tool answered %s", i, body)
		}
	}
}

// Once create_source is answered, its webhook takes a POST: never a 404;
// once delete_source is, the next POST is refused.
func TestWebhookReadsItsWrites(t *testing.T) {
	d := startWith(t, func(c *daemon.Config) { c.HTTP = "127.0.0.1:0" }, "demo")
	nc := connectTo(t, d)
	post := func(name string) int {
		t.Helper()
		res, err := http.Post(d.WebhookURL()+"/hooks/demo/"+name, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	missed := 0
	for i := range 50 {
		name := fmt.Sprintf("hook%d", i)
		mustOK(t, nc, messages.VerbCreateSource, fmt.Sprintf(`{"name":%q,"type":"webhook","fires":"rang"}`, name))
		if status := post(name); status != http.StatusAccepted {
			missed++
			t.Errorf("POST right after create_source %s: %d", name, status)
		}
		mustOK(t, nc, messages.VerbDeleteSource, fmt.Sprintf(`{"name":%q}`, name))
		if status := post(name); status != http.StatusNotFound {
			missed++
			t.Errorf("POST right after delete_source %s: %d, want 404", name, status)
		}
	}
	if missed > 0 {
		t.Fatalf("%d of 100 POSTs did not see the source as just created or deleted", missed)
	}
}

// The seed's data-source test: a poll source that only fires is
// accepted, and fires its transition on its interval (the clock's).
func TestPollSourceThatOnlyFires(t *testing.T) {
	lumentest.NeedGuest(t)
	r := newTimedRig(t, func(c *daemon.Config) { c.SourceMinInterval = 100 * time.Millisecond })
	defineTool(t, r.nc, map[string]any{"name": "mock_tool", "code": "return 1;"})
	r.ok(messages.VerbAppendRules, `{"rules":[{"from":"off","on":"test_updated","to":"red"}]}`)
	r.ok(messages.VerbCreateSource, `{"name":"test","interval_ms":100,"fetch":{"tool":"mock_tool"},"fires":"test_updated"}`)
	r.step("the source to fire test_updated", func() bool { return r.ok(messages.VerbGet, `{}`)["state"] == "red" })
	if got := r.lastEvent("lumen.demo.evt.in.data"); got != `{"source":"test"}` {
		t.Errorf("the source's run: %s", got)
	}
	if got := r.lastEvent("lumen.demo.evt.out.state"); !strings.Contains(got, `"to":"red"`) {
		t.Errorf("the state event: %s", got)
	}
}

// Once define_function is answered, a state that calls it is shown with
// it: the LED the led verb reports right after set_state has the color
// the newest function gives (the device reads the light's model again
// after a change, and a led request waits for that read).
func TestFunctionReadsItsWrites(t *testing.T) {
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	mustOK(t, nc, messages.VerbCreateState, `{"name":"fn","r":"level()","g":0,"b":0}`)
	stale := 0
	for i := range 30 {
		mustOK(t, nc, messages.VerbDefineFunction, fmt.Sprintf(`{"name":"level","code":"return %d;"}`, 10+i))
		mustOK(t, nc, messages.VerbSetState, `{"name":"off"}`)
		mustOK(t, nc, messages.VerbSetState, `{"name":"fn"}`)
		b, code := request(t, nc, messages.VerbLED, `{}`)
		var led messages.LEDReply
		if err := json.Unmarshal(b, &led); err != nil || code != "" {
			t.Fatalf("led: %s %s", code, b)
		}
		if led.State != "fn" || len(led.Raw) == 0 || int(led.Raw[0].R) != 10+i {
			stale++
			t.Errorf("led right after define_function %d and set_state: %s", 10+i, b)
		}
	}
	if stale > 0 {
		t.Fatalf("%d of 30 reads of the LED were stale", stale)
	}
}
