package main_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Re-applying an exported file leaves the light where it is (issue 26,
// item 1): the dry run and the apply both say the state stays, apply
// --state moves it, and a rollback keeps it too.
func TestReapplyExportKeepsState(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--http", "127.0.0.1:0")
	nc := connect(t, d.URL)
	state := func() string {
		return fmt.Sprint(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"])
	}
	cli := func(args ...string) string {
		t.Helper()
		out, code := runCLI(t, d.URL, args...)
		if code != 0 {
			t.Fatalf("lumen %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	cli("state", "red")
	file := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(file, []byte(cli("export")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := cli("apply", "-f", file, "--dry-run"); strings.Contains(out, "state") && strings.Contains(out, "→") {
		t.Errorf("the dry run says the state moves:\n%s", out)
	}
	if out := cli("apply", "-f", file); strings.Contains(out, "red → off") || state() != "red" {
		t.Fatalf("re-applying the export moved the light to %s:\n%s", state(), out)
	}
	// The dry run says what apply --state would do, and it does it.
	if out := cli("apply", "-f", file, "--state", "blue", "--dry-run"); !strings.Contains(out, "state: red → blue") || state() != "red" {
		t.Errorf("apply --state --dry-run (state %s):\n%s", state(), out)
	}
	if out := cli("apply", "-f", file, "--state", "blue"); !strings.Contains(out, "red → blue") || state() != "blue" {
		t.Fatalf("apply --state blue: the light is %s\n%s", state(), out)
	}
	out, code := runCLI(t, d.URL, "apply", "-f", file, "--state", "purple")
	if code != 1 || !strings.Contains(out, `"purple"`) || state() != "blue" {
		t.Errorf("apply --state purple: exit %d, state %s\n%s", code, state(), out)
	}
	// A rollback to the demo's configuration keeps the state.
	h := mustOK(t, request(t, nc, "lumen.demo.cmd.history", `{}`)).Body["changes"].([]any)
	first := fmt.Sprint(h[0].(map[string]any)["seq"])
	if out := cli("rollback", first); strings.Contains(out, "blue → off") || state() != "blue" {
		t.Fatalf("rollback %s moved the light to %s:\n%s", first, state(), out)
	}
	// The page's editor: the configuration it shows, applied back.
	config := strings.TrimRight(d.Page(t), "/") + "/api/v1/lights/demo/config"
	res, err := http.Get(config)
	if err != nil {
		t.Fatal(err)
	}
	yaml, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, query := range []string{"?dry_run=1", ""} {
		req, _ := http.NewRequest(http.MethodPut, config+query, bytes.NewReader(yaml))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || strings.Contains(string(b), `"state":{`) || state() != "blue" {
			t.Fatalf("the page's Apply%s: %d, the light is %s\n%s", query, res.StatusCode, state(), b)
		}
	}
	// "state" in the body names a state to go to, on the wire too; a
	// removed state gives way to initial, and the dry run says so.
	r := mustOK(t, request(t, nc, "lumen.demo.cmd.apply", `{"states":[{"name":"red","r":255},{"name":"green","g":255}],"rules":[],"initial":"green","dry_run":true}`))
	if ch := r.Body["changes"].(map[string]any); ch["state"] == nil || fmt.Sprint(ch["state"]) != "map[from:blue to:green]" {
		t.Errorf("dry run removing the current state: changes %v", ch)
	}
	mustOK(t, request(t, nc, "lumen.demo.cmd.apply", `{"states":[{"name":"red","r":255},{"name":"blue","b":255}],"rules":[],"state":"red"}`))
	if s := state(); s != "red" {
		t.Errorf(`apply {"state":"red"}: the light is %s`, s)
	}
	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify", "--quiet"); code != 0 {
		t.Fatalf("replay --verify: %s", out)
	}
}

// A layer that ends after 0 fires or lasts 0s is refused, with the range
// it takes, by the CLI and on the wire (issue 26, item 2): it used to be
// a permanent rule.
func TestLayerOfNothingRefused(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	rules := func() int { return len(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["rules"].([]any)) }
	before := rules()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fires", "0"}, "at least 1"},
		{[]string{"--fires", "-2"}, "at least 1"},
		{[]string{"--for", "0s"}, "from 1ms"},
		{[]string{"--for", "100us"}, "from 1ms"},
	} {
		args := append([]string{"rule", "add", "*", "button_click", "red"}, tc.args...)
		out, code := runCLI(t, d.URL, args...)
		if code == 0 || !strings.Contains(out, tc.want) || rules() != before {
			t.Errorf("lumen %s: exit %d, %d rules (before %d)\n%s\nwant %q", strings.Join(args, " "), code, rules(), before, out, tc.want)
		}
	}
	for _, tc := range []struct{ layer, want string }{
		{`{"fires":0}`, "fires is 0; give how many times the layer's rules fire before it ends, at least 1"},
		{`{"ms":0}`, "ms is 0; give how long the layer lasts in milliseconds, from 1 to 1000000000000"},
	} {
		r := request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"*","on":"button_click","to":"red"}],"layer":`+tc.layer+`}`)
		if r.Code != "400" || !strings.Contains(r.Header, tc.want) || rules() != before {
			t.Errorf("append_rules layer %s: %s %s", tc.layer, r.Code, r.Raw)
		}
	}
}
