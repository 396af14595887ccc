package web_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/web"
)

// comingDaemon starts the built binary with HTTP and returns its page's
// address and a connection to its bus.
func comingDaemon(t *testing.T, args ...string) (string, *nats.Conn) {
	t.Helper()
	d := lumentest.Start(t, t.TempDir(), append([]string{"--http", "127.0.0.1:0", "--hardware", "sim"}, args...)...)
	nc := lumentest.Connect(t, d.URL)
	return strings.TrimSuffix(d.Page(t), "/"), nc
}

// comingHistory is the light's configuration changes, over NATS.
func comingHistory(t *testing.T, nc *nats.Conn) []messages.ConfigChange {
	t.Helper()
	m, err := nc.Request("lumen.demo.cmd.history", []byte(`{}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var h messages.HistoryReply
	if err := json.Unmarshal(m.Data, &h); err != nil || !h.OK {
		t.Fatalf("history: %v %s", err, m.Data)
	}
	return h.Changes
}

// GET /api/v1/lights/{light}/coming says what will happen, soonest
// first, untimed last; an unknown light is a 404 naming the lights.
func TestComingEndpoint(t *testing.T) {
	t.Parallel()
	base, nc := comingDaemon(t)
	status, b := httpDo(t, "GET", base+"/api/v1/lights/demo/coming", "")
	var r web.ComingReply
	if err := json.Unmarshal(b, &r); status != 200 || err != nil || !r.OK || len(r.Items) != 0 || r.Now.IsZero() {
		t.Fatalf("nothing coming: %d %v %s", status, err, b)
	}
	if !bytes.Contains(b, []byte(`"items":[]`)) {
		t.Errorf("no items is not an empty list: %s", b)
	}
	request(t, nc, "append_rules", `{"rules":[{"from":"*","on":"button_click","to":"blue"}],"layer":{"name":"tenmin","ms":600000}}`)
	request(t, nc, "append_rules", `{"rules":[{"from":"*","on":"button_double_click","to":"green"}],"layer":{"name":"twice","fires":2}}`)
	request(t, nc, "create_schedule", `{"name":"tick","cron":"*/5 * * * *","fires":"tick"}`)
	status, b = httpDo(t, "GET", base+"/api/v1/lights/demo/coming", "")
	if err := json.Unmarshal(b, &r); status != 200 || err != nil {
		t.Fatalf("coming: %d %v %s", status, err, b)
	}
	var got []string
	for _, it := range r.Items {
		got = append(got, it.Kind+" "+it.Name)
	}
	if want := "schedule tick, layer tenmin, layer twice"; strings.Join(got, ", ") != want {
		t.Errorf("coming up: %v, want %s (%s)", got, want, b)
	}
	if it := r.Items[0]; it.At == nil || it.At.Sub(r.Now) > 5*time.Minute || it.At.Before(r.Now) {
		t.Errorf("the schedule's next run is not within 5 minutes of %v: %+v", r.Now, it)
	}
	if it := r.Items[2]; it.At != nil || !strings.Contains(it.Text, "after 2 more fires") {
		t.Errorf("the layer that ends by fires: %+v", it)
	}
	if status, b := httpDo(t, "GET", base+"/api/v1/lights/nosuch/coming", ""); status != 404 || !bytes.Contains(b, []byte("demo")) {
		t.Errorf("an unknown light: %d %s", status, b)
	}
}

// PUT /api/v1/lights/{light}/rules/{id} changes a rule in one input,
// keeping its id; a refusal, a rule changed since it was read and an
// unknown rule change nothing.
func TestEditRuleEndpoint(t *testing.T) {
	t.Parallel()
	base, nc := comingDaemon(t)
	request(t, nc, "set_var", `{"name":"n","value":1}`)
	var g messages.GetReply
	if err := json.Unmarshal([]byte(getJSON(t, nc)), &g); err != nil {
		t.Fatal(err)
	}
	r1 := g.Rules[0] // off → red on button_click
	was, _ := json.Marshal(r1)
	before := len(comingHistory(t, nc))
	url := base + "/api/v1/lights/demo/rules/" + r1.ID

	for _, tc := range []struct {
		name, url, body string
		status          int
		says            string
	}{
		{"a bad condition", url, `{"rule":{"from":"off","on":"button_click","to":"blue","condition":"getData('n' >"},"was":` + string(was) + `}`, 400, "condition"},
		{"an unknown state", url, `{"rule":{"from":"off","on":"button_click","to":"mauve"},"was":` + string(was) + `}`, 404, "mauve"},
		{"changed since read", url, `{"rule":{"from":"off","on":"button_click","to":"blue"},"was":{"id":"r1","from":"off","on":"button_click","to":"green","priority":0,"enabled":true}}`, 409, "changed since you read it"},
		{"no such rule", base + "/api/v1/lights/demo/rules/r99", `{"rule":{"from":"off","on":"button_click","to":"blue"}}`, 404, "no rule r99"},
		{"not JSON", url, `{"rule":`, 400, "rule"},
	} {
		status, b := httpDo(t, "PUT", tc.url, tc.body)
		if status != tc.status || !bytes.Contains(b, []byte(tc.says)) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, status, b, tc.status, tc.says)
		}
	}
	if n := len(comingHistory(t, nc)); n != before {
		t.Fatalf("refused edits changed the configuration: %d changes, were %d", n, before)
	}

	status, b := httpDo(t, "PUT", url, `{"rule":{"from":"off","on":"button_click","to":"blue","priority":3,"fade_ms":1000},"was":`+string(was)+`}`)
	if status != 200 || !bytes.Contains(b, []byte(`"ok":true`)) {
		t.Fatalf("the edit: %d %s", status, b)
	}
	changes := comingHistory(t, nc)
	if len(changes) != before+1 {
		t.Fatalf("the edit made %d configuration inputs, want 1", len(changes)-before)
	}
	var after messages.GetReply
	if err := json.Unmarshal([]byte(getJSON(t, nc)), &after); err != nil {
		t.Fatal(err)
	}
	if got := after.Rules[0]; got.ID != r1.ID || got.To != "blue" || got.Priority != 3 || got.FadeMs != 1000 || len(after.Rules) != len(g.Rules) {
		t.Errorf("after the edit the rules are %+v", after.Rules)
	}
	if string(after.Vars["n"]) != "1" {
		t.Errorf("the edit changed the variables: %s", after.Vars)
	}
	request(t, nc, "fire", `{"transition":"button_click"}`)
	if s := getLight(t, nc).State; s != "blue" {
		t.Errorf("after the edit a click goes to %s, want blue", s)
	}
}
