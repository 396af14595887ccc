package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// historyPost POSTs body to the page's API path and answers the status
// and the reply.
func historyPost(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	return httpJSON(t, http.MethodPost, url, body)
}

// historyClick clicks the element sel (browser.click).
func historyClick(t *testing.T, b *browser, what, sel string) {
	t.Helper()
	b.click(t, what, sel)
}

// historyConfig is light demo's states and rules over NATS, now (seq 0)
// or right after input seq.
func historyConfig(t *testing.T, nc *nats.Conn, seq uint64) string {
	t.Helper()
	m, err := nc.Request("lumen.demo.cmd.get", fmt.Appendf(nil, `{"seq":%d}`, seq), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		States json.RawMessage `json:"states"`
		Rules  json.RawMessage `json:"rules"`
	}
	if err := json.Unmarshal(m.Data, &g); err != nil || g.States == nil {
		t.Fatalf("get %d: %v %s", seq, err, m.Data)
	}
	var out bytes.Buffer
	for _, raw := range []json.RawMessage{g.States, g.Rules} {
		var v any
		_ = json.Unmarshal(raw, &v)
		b, _ := json.Marshal(v) // the same configuration, the same text
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.String()
}

// The History panel: three changes by three doors, newest first with who
// made them; a change's diff; Cancel, a refused rollback and a rollback,
// checked over NATS; a long history; axe and the layout with a long diff
// open.
func TestPageHistory(t *testing.T) {
	t.Parallel()
	src := axeScript(t)
	b := newBrowser(t)
	d, nc := openPage(t, b)
	api := d.Page(t) + "api/v1/lights/demo/"
	hist := `section[data-light="demo"] details.history`
	q := func(sel string) string { return `document.querySelector('` + hist + ` ` + sel + `')` }
	li := func(seq uint64) string { return fmt.Sprintf(`li.change[data-seq="%d"]`, seq) }

	// 1. Through the page's door (by http).
	status, r := historyPost(t, api+"create_state", `{"name":"teal","r":0,"g":128,"b":128}`)
	if status != 200 {
		t.Fatalf("create_state: %d %v", status, r)
	}
	first := uint64(r["seq"].(float64))
	// 2. Over NATS (by nats): a rule with a long condition, for a wide diff.
	second := historyMutate(t, nc, "append_rules", `{"rules":[{"from":"*","on":"button_double_click","to":"blue","condition":"getData('a_rather_long_variable_name_for_a_wide_diff_line') === undefined && getData('another_one') !== 3","priority":10}]}`, nil)

	b.open(t, "open History", hist)
	b.waitPage(t, "the history", q(`li.change`)+`?.dataset.seq === "`+fmt.Sprint(second)+`"`)

	// 3. Over NATS as an agent's step, while the panel is open: it comes
	// on top by itself.
	third := historyMutate(t, nc, "delete_state", `{"name":"teal"}`, nats.Header{"Lumen-Who": []string{"agent:s1:3"}})
	b.waitPage(t, "the third change on top", q(`li.change`)+`?.dataset.seq === "`+fmt.Sprint(third)+`"`)

	type shown struct {
		Seq     string `json:"seq"`
		By      string `json:"by"`
		Summary string `json:"summary"`
		Back    bool   `json:"back"`
		Time    string `json:"time"`
	}
	entries := func() []shown {
		return eval[[]shown](t, b, `[...document.querySelectorAll('`+hist+` li.change')].map((li) => ({seq: li.dataset.seq,
			by: li.querySelector(".by").textContent, summary: li.querySelector(".summary").textContent,
			back: !!li.querySelector(".rollback"), time: li.querySelector("time").textContent}))`)
	}
	got := entries()
	want := []shown{{fmt.Sprint(third), "agent:s1:3", "-state teal", false, ""}, {fmt.Sprint(second), "nats", "+rule", true, ""}, {fmt.Sprint(first), "http", "+state teal", true, ""}}
	if len(got) < 4 {
		t.Fatalf("the history shows %d changes, want the seed's and three: %+v", len(got), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Seq != w.Seq || g.By != w.By || !strings.Contains(g.Summary, w.Summary) || g.Back != w.Back || g.Time == "" {
			t.Errorf("change %d shows %+v, want %+v", i, g, w)
		}
	}
	if top := eval[string](t, b, q(`li.change`)+`.textContent`); !strings.Contains(top, "(current)") {
		t.Errorf("the newest change does not say it is current: %q", top)
	}

	// Show diff: the deletion's - lines, signed and colored.
	show := func(seq uint64) {
		historyClick(t, b, "show diff", hist+` `+li(seq)+` .show-diff`)
		b.waitPage(t, "the diff", q(li(seq)+` .diff pre`)+` !== null`)
	}
	if name := eval[string](t, b, q(li(third)+` .show-diff`)+`.getAttribute("aria-label")`); !strings.Contains(name, fmt.Sprintf("input %d", third)) {
		t.Errorf("Show diff is named %q", name)
	}
	show(third)
	if e := eval[string](t, b, q(li(third)+` .show-diff`)+`.getAttribute("aria-expanded")`); e != "true" {
		t.Errorf("an open diff's button has aria-expanded %q", e)
	}
	lines := func(seq uint64, cls string) []string {
		return eval[[]string](t, b, `[...document.querySelectorAll('`+hist+` `+li(seq)+` .diff .`+cls+`')].map((s) => s.textContent.replace(/\n$/, ""))`)
	}
	del, add := lines(third, "del"), lines(third, "add")
	if !slices.Contains(del, "-  - name: teal") || !slices.Contains(del, "-    g: 128") || len(add) != 0 {
		t.Errorf("the deletion's diff: - %q, + %q", del, add)
	}
	if c := eval[[]string](t, b, `[".del", ".same"].map((c) => getComputedStyle(document.querySelector('`+hist+` `+li(third)+` .diff '+c)).color)`); c[0] == c[1] {
		t.Errorf("- lines have the color of the others: %s", c[0])
	}
	show(first)
	if add := lines(first, "add"); !slices.Contains(add, "+  - name: teal") || !slices.Contains(add, "+    b: 128") {
		t.Errorf("the creation's diff: + %q", add)
	}
	historyClick(t, b, "hide the diff", hist+` `+li(first)+` .show-diff`)
	b.waitPage(t, "the diff hidden", q(li(first)+` .diff`)+` === null`)

	// Roll back to the first change: asked inline; Cancel changes nothing.
	count := len(historyOf(t, nc).Changes)
	now := historyConfig(t, nc, 0)
	ask := func(seq uint64) {
		historyClick(t, b, "roll back to here", hist+` `+li(seq)+` .rollback`)
		b.waitPage(t, "the question", q(li(seq)+` .confirm`)+` !== null`)
	}
	ask(first)
	question := fmt.Sprintf("Roll back demo to its configuration after input %d? It is one new change, which can be rolled back too.", first)
	if text := b.text(t, hist+` `+li(first)+` .confirm p`); text != question {
		t.Errorf("the question is %q, want %q", text, question)
	}
	if f := eval[string](t, b, `document.activeElement.textContent`); f != "Cancel" {
		t.Errorf("the question has the focus on %q, want Cancel", f)
	}
	historyClick(t, b, "cancel", hist+` `+li(first)+` .cancel`)
	b.waitPage(t, "the question gone", q(li(first)+` .confirm`)+` === null`)

	// A rollback the light refuses (to an input past its journal) says so
	// inline and changes nothing.
	eval[any](t, b, q(li(first))+`.dataset.seq = "1099511627776"; null`)
	ask(1099511627776)
	historyClick(t, b, "roll back", hist+` `+li(1099511627776)+` .do-rollback`)
	b.waitPage(t, "the refusal", q(li(1099511627776)+` .confirm .history-status.error`)+` !== null`)
	if e := b.text(t, hist+` `+li(1099511627776)+` .confirm .history-status`); !strings.Contains(e, "no event of light demo") || !strings.Contains(e, "nothing changed") {
		t.Errorf("the refusal says %q", e)
	}
	eval[any](t, b, q(li(1099511627776))+`.dataset.seq = "`+fmt.Sprint(first)+`"; null`)
	historyClick(t, b, "cancel", hist+` `+li(first)+` .cancel`)
	time.Sleep(300 * time.Millisecond) // a change would have come by now
	if n := len(historyOf(t, nc).Changes); n != count || historyConfig(t, nc, 0) != now {
		t.Fatalf("Cancel or a refused rollback changed the light: %d changes, were %d", n, count)
	}
	// Through the API directly: the light's refusal, with its code.
	if status, r := historyPost(t, api+"rollback", `{"seq":1099511627776}`); status != 404 || !strings.Contains(fmt.Sprint(r["error"]), "is no event of light demo") {
		t.Errorf("a rollback past the journal: %d %v", status, r)
	}

	// Roll back: the light's configuration is the first change's again,
	// and the rollback is on top.
	ask(first)
	historyClick(t, b, "roll back", hist+` `+li(first)+` .do-rollback`)
	b.waitPage(t, "the rollback on top", q(`li.change .summary`)+`?.textContent.startsWith("rollback to `+fmt.Sprint(first)+`")`)
	if after, then := historyConfig(t, nc, 0), historyConfig(t, nc, first); after != then {
		t.Errorf("after the rollback the light is\n%s\nnot as after input %d:\n%s", after, first, then)
	}
	if by := b.text(t, hist+` li.change .by`); by != "rollback:http" {
		t.Errorf("the rollback is by %q", by)
	}
	if s := b.text(t, hist+` .history-status`); !strings.Contains(s, fmt.Sprintf("rolled back demo to its configuration after input %d", first)) {
		t.Errorf("the panel says %q", s)
	}

	// axe and the layout, with the panel and the long diff open: it
	// scrolls in its own box.
	show(second)
	checkLayout(t, b, "history", true)
	checkAxe(t, b, src)

	// A long history: the newest 50, then Show older.
	for i := range 51 {
		historyMutate(t, nc, "create_state", fmt.Sprintf(`{"name":"s%d","r":%d,"g":0,"b":0}`, i, i), nil)
	}
	total := len(historyOf(t, nc).Changes)
	b.waitPage(t, "the newest 50", q(`li.change .summary`)+`?.textContent.includes("state s50")`)
	if n := eval[float64](t, b, `document.querySelectorAll('`+hist+` li.change').length`); n != 50 {
		t.Errorf("a long history shows %v changes, want 50", n)
	}
	if o := b.text(t, hist+` .older`); o != fmt.Sprintf("Show older (%d more)", total-50) {
		t.Errorf("the button says %q", o)
	}
	historyClick(t, b, "show older", hist+` .older`)
	b.waitPage(t, "all the changes", fmt.Sprintf(`document.querySelectorAll('%s li.change').length === %d`, hist, total))

	b.mu.Lock()
	defer b.mu.Unlock()
	// The refused rollback's 404 is the browser's one expected complaint.
	problems := slices.DeleteFunc(b.problems, func(p string) bool {
		return strings.HasSuffix(p, "the server responded with a status of 404 (Not Found)")
	})
	if len(problems) > 0 {
		t.Errorf("the page logged problems:\n%s", strings.Join(problems, "\n"))
	}
}

// At a hub, History works for a light of a Pi: its changes, a diff, and
// a rollback through the hub (checked over NATS at the hub).
func TestPageHistoryAtAHub(t *testing.T) {
	t.Parallel()
	hub, nc := hubWithPorch(t)
	var first uint64
	lumentest.WaitFor(t, 30*time.Second, "porch at the hub", func() bool {
		m, err := nc.Request("lumen.porch.cmd.create_state", []byte(`{"name":"teal","r":0,"g":128,"b":128}`), 5*time.Second)
		if err != nil || !bytes.Contains(m.Data, []byte(`"ok":true`)) {
			return false
		}
		var r struct{ Seq uint64 }
		_ = json.Unmarshal(m.Data, &r)
		first = r.Seq
		return true
	})
	if m, err := nc.Request("lumen.porch.cmd.delete_state", []byte(`{"name":"teal"}`), 5*time.Second); err != nil || !bytes.Contains(m.Data, []byte(`"ok":true`)) {
		t.Fatalf("delete_state: %v", err)
	}
	b := newBrowser(t)
	b.do(t, "load the house", chromedp.Navigate(hub.Page(t)), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
	hist := `section[data-light="porch"] details.history`
	li := fmt.Sprintf(`li.change[data-seq="%d"]`, first)
	b.open(t, "open History", hist)
	b.waitPage(t, "the porch's changes", `document.querySelector('`+hist+` `+li+`') !== null`)
	historyClick(t, b, "show diff", hist+` `+li+` .show-diff`)
	b.waitPage(t, "the diff", `document.querySelector('`+hist+` `+li+` .diff')?.textContent.includes("+  - name: teal")`)
	historyClick(t, b, "roll back to here", hist+` `+li+` .rollback`)
	historyClick(t, b, "roll back", hist+` `+li+` .do-rollback`)
	b.waitPage(t, "the rollback on top", `document.querySelector('`+hist+` li.change .summary')?.textContent.startsWith("rollback to `+fmt.Sprint(first)+`")`)
	lumentest.WaitFor(t, 10*time.Second, "teal back on the porch", func() bool {
		m, err := nc.Request("lumen.porch.cmd.get", []byte(`{}`), 5*time.Second)
		return err == nil && bytes.Contains(m.Data, []byte(`"name":"teal"`))
	})
}
