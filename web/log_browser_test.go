package web_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// The event log in real Chromium: words for every event a session makes,
// never JSON; newest first; the filters; Why?; Older; live within 500 ms;
// accessible and without sideways scroll with a Why? open.

// logSeq sends verb to light over NATS and returns the input's sequence.
func logSeq(t *testing.T, nc *nats.Conn, light, verb, body string) uint64 {
	t.Helper()
	m, err := nc.Request("lumen."+light+".cmd."+verb, []byte(body), 10*time.Second)
	if err != nil {
		t.Fatalf("%s %s: %v", verb, body, err)
	}
	var r struct {
		OK    bool   `json:"ok"`
		Seq   uint64 `json:"seq"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &r); err != nil || !r.OK {
		t.Fatalf("%s %s: %s", verb, body, m.Data)
	}
	return r.Seq
}

// logEntries are the log's entries as the page shows them.
type logShown struct {
	Light, Seq, Type, Kind, Words string
	Hidden, Error                 bool
}

func logList(t *testing.T, b *browser) []logShown {
	t.Helper()
	return eval[[]logShown](t, b, `[...document.querySelectorAll("#log > li")].map((li) => ({Light: li.dataset.light, Seq: li.dataset.seq,
		Type: li.dataset.type, Kind: li.dataset.kind, Words: li.querySelector(".words").textContent, Hidden: li.hidden || li.offsetParent === null,
		Error: li.classList.contains("error")}))`)
}

// logPress toggles the filter button named name.
func logPress(t *testing.T, b *browser, kind string) {
	t.Helper()
	b.do(t, "filter "+kind, chromedp.Click(chromedp.CSS(`section.events .kind[data-kind="`+kind+`"]`)))
}

func TestPageLog(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	_, nc := openPage(t, b)
	sec := `section[data-light="demo"]`
	b.waitPage(t, "the log's first page", `performance.getEntriesByName("lumen-log").length > 0`)
	if eval[bool](t, b, `document.querySelector(".log-light").offsetParent !== null`) {
		t.Error("a Light select on a page of one light")
	}

	// A session: clicks, a variable, a rule of mine that reads it, a rule
	// that throws, the everyday box, power, brightness and color.
	logSeq(t, nc, "demo", "create_state", `{"name":"party","r":200,"g":0,"b":200}`)
	setGuests := logSeq(t, nc, "demo", "set_var", `{"name":"guests","value":3}`)
	logSeq(t, nc, "demo", "append_rules", `{"rules":[{"id":"my_rule","from":"*","on":"button_click","to":"party","condition":"getData('guests') > 2","priority":10},
		{"id":"boom","from":"*","on":"boom","to":"party","condition":"undefinedFn()"}]}`)
	b.do(t, "click", chromedp.Click(chromedp.CSS(sec+` .press[data-edges=click]`)))
	waitState(t, b, nc, "demo", "party")
	if m, err := nc.Request("lumen.demo.cmd.fire", []byte(`{"transition":"boom"}`), 10*time.Second); err != nil {
		t.Fatal(err)
	} else if !bytes.Contains(m.Data, []byte("boom")) {
		t.Logf("fire boom: %s", m.Data)
	}
	b.do(t, "open the agent", chromedp.Click(chromedp.CSS(sec+` details.agent summary`)))
	b.do(t, "say it", chromedp.SendKeys(chromedp.CSS(sec+` form.ask input`), "turn it off"),
		chromedp.Click(chromedp.CSS(sec+` form.ask button[type=submit]`)))
	waitState(t, b, nc, "demo", "off")
	b.do(t, "power", chromedp.Click(chromedp.CSS(sec+` .power`)))
	waitLight(t, b, nc, "on", func(g lightGet) bool { return g.State != "off" })
	logSeq(t, nc, "demo", "set_state", `{"name":"red"}`)
	logSeq(t, nc, "demo", "set_brightness", `{"percent":40}`)
	b.do(t, "orange", chromedp.Click(chromedp.CSS(sec+` .preset:nth-child(3)`)))

	want := []string{"in.fired", "in.var", "in.config", "in.state", "in.power", "in.brightness", "in.color",
		"out.state", "out.var", "out.config", "out.error", "out.agent", "out.brightness"}
	has := func(list []logShown, typ string) bool {
		for _, e := range list {
			if e.Type == typ {
				return true
			}
		}
		return false
	}
	if !lumentest.Within(10*time.Second, func() bool {
		list := logList(t, b)
		for _, typ := range want {
			if !has(list, typ) {
				return false
			}
		}
		return true
	}) {
		list := logList(t, b)
		for _, typ := range want {
			if !has(list, typ) {
				t.Errorf("no %s in the log", typ)
			}
		}
		for _, e := range list {
			t.Logf("%s %s %s", e.Seq, e.Type, e.Words)
		}
		t.FailNow()
	}
	check := func(list []logShown) {
		t.Helper()
		var last int
		for _, e := range list {
			if strings.TrimSpace(e.Words) == "" || strings.ContainsAny(e.Words, "{}") || strings.Contains(e.Words, `":`) {
				t.Errorf("%s %s reads %q", e.Seq, e.Type, e.Words)
			}
			seq, _ := strconv.Atoi(e.Seq)
			if last != 0 && seq >= last {
				t.Errorf("%d after %d: not newest first", seq, last)
			}
			last = seq
			if e.Error != (e.Kind == "error") || e.Error != (e.Type == "out.error" || e.Type == "out.restart") {
				t.Errorf("%s %s: kind %s, highlighted %v", e.Seq, e.Type, e.Kind, e.Error)
			}
		}
	}
	list := logList(t, b)
	check(list)
	if log := b.text(t, "#log"); strings.ContainsAny(log, "{}") {
		t.Errorf("the log shows braces:\n%s", log)
	}
	for _, e := range list {
		if e.Type == "out.error" && !strings.Contains(e.Words, "boom") {
			t.Errorf("the rule's error reads %q", e.Words)
		}
	}

	// The Errors filter alone shows the errors only; without it, none.
	for _, k := range []string{"input", "state", "agent"} {
		logPress(t, b, k)
	}
	b.waitPage(t, "errors only", `(() => { const shown = [...document.querySelectorAll("#log > li")].filter((li) => !li.hidden);
		return shown.length > 0 && shown.every((li) => li.classList.contains("error")) })()`)
	for _, k := range []string{"error", "input", "state", "agent"} {
		logPress(t, b, k)
	}
	b.waitPage(t, "no errors", `(() => { const shown = [...document.querySelectorAll("#log > li")].filter((li) => !li.hidden);
		return shown.length > 10 && !shown.some((li) => li.classList.contains("error")) })()`)
	logPress(t, b, "error")
	b.waitPage(t, "everything again", `[...document.querySelectorAll("#log > li.error")].length > 0`)
	if got := eval[[]string](t, b, `[...document.querySelectorAll("section.events .kind")].map((b) => b.textContent + "=" + b.getAttribute("aria-pressed"))`); strings.Join(got, " ") != "Inputs=true State changes=true Errors=true Agent=true" {
		t.Errorf("the filters: %v", got)
	}

	// Why? on the state change of the click names my rule, the variable
	// it read and the input that set it; a second press closes it.
	st := `#log > li[data-type="out.state"]`
	mine := eval[string](t, b, `[...document.querySelectorAll('`+st+`')].find((li) => li.querySelector(".words").textContent.includes("my_rule")).dataset.seq`)
	if mine == "" {
		t.Fatal("no state change by my_rule in the log")
	}
	entry := `#log > li[data-seq="` + mine + `"]`
	if name := eval[string](t, b, `document.querySelector('`+entry+` button.why').textContent`); name != "Why?" {
		t.Errorf("the button says %q", name)
	}
	b.do(t, "why", chromedp.Click(chromedp.CSS(entry+` button.why`)))
	b.waitPage(t, "the answer", `document.querySelector('`+entry+` .why-rule') !== null`)
	why := b.text(t, entry+` .why-body`)
	for _, s := range []string{"my_rule", "fired", "→ party", "getData('guests') > 2", "was true", "guests = 3", "set by input #" + strconv.FormatUint(setGuests, 10), "(var)", "button_click"} {
		if !strings.Contains(why, s) {
			t.Errorf("Why? does not say %q:\n%s", s, why)
		}
	}
	checkLayout(t, b, "log with a Why? open", false)
	checkAxe(t, b, axeScript(t))
	b.do(t, "why again", chromedp.Click(chromedp.CSS(entry+` button.why`)))
	if !eval[bool](t, b, `document.querySelector('`+entry+` .why-body').hidden`) {
		t.Error("a second Why? leaves the answer open")
	}
	// An answer that fails says why in the entry.
	errEntry := `#log > li[data-type="out.error"]`
	b.do(t, "why of the error", chromedp.Click(chromedp.CSS(errEntry+` button.why`)))
	b.waitPage(t, "the error's why", `document.querySelector('`+errEntry+` .why-body').textContent.length > 10 && !document.querySelector('`+errEntry+` .why-body').textContent.includes("Asking")`)

	// A new event over NATS shows within 500 ms, on top.
	request(t, nc, "set_var", `{"name":"zz","value":42}`)
	b.within500(t, "the new event", `[...document.querySelectorAll("#log > li .words")].slice(0, 2).map((w) => w.textContent).join("|") === "var zz = 42 (input "+document.querySelector("#log > li:nth-child(2)").dataset.seq+")|set zz = 42 by nats"`)

	// Older: more than a page, loaded again.
	for i := range 40 {
		request(t, nc, "set_var", `{"name":"n","value":`+strconv.Itoa(i)+`}`)
	}
	b.do(t, "load again", chromedp.Navigate("about:blank"), chromedp.Navigate(strings.TrimSuffix(eval[string](t, b, `location.href`), "#")))
	b.waitPage(t, "the first page", `performance.getEntriesByName("lumen-log").length > 0 && document.querySelectorAll("#log > li").length >= 50`)
	first := len(logList(t, b))
	if first != 50 {
		t.Errorf("the first page has %d entries", first)
	}
	for n := 0; eval[bool](t, b, `!document.querySelector("section.events .older").hidden`); n++ {
		if n > 20 {
			t.Fatal("Older never ends")
		}
		before := len(logList(t, b))
		b.do(t, "older", chromedp.Click(chromedp.CSS(`section.events .older`)))
		b.waitPage(t, "older entries", `document.querySelectorAll("#log > li").length > `+strconv.Itoa(before)+` || document.querySelector("section.events .older").hidden`)
	}
	all := logList(t, b)
	check(all)
	if n, _ := strconv.Atoi(all[len(all)-1].Seq); len(all) <= 50 || n > 3 {
		t.Errorf("after Older the log has %d entries, the oldest %d", len(all), n)
	}
	// The page keeps a few hundred entries: the oldest go, and Older
	// reads them again.
	for i := range 160 {
		request(t, nc, "set_var", `{"name":"m","value":`+strconv.Itoa(i)+`}`)
	}
	b.waitPage(t, "the last live event", `document.querySelector("#log > li:nth-child(2) .words").textContent === "set m = 159 by nats"`)
	if n := eval[int](t, b, `document.querySelectorAll("#log > li").length`); n != 300 || eval[bool](t, b, `document.querySelector("section.events .older").hidden`) {
		t.Errorf("after 320 live events the page keeps %d entries, and no Older", n)
	}
	oldest := eval[string](t, b, `document.querySelector("#log > li:last-child").dataset.seq`)
	b.do(t, "older after the live ones", chromedp.Click(chromedp.CSS(`section.events .older`)))
	b.waitPage(t, "the entries before "+oldest, `Number(document.querySelector("#log > li:last-child").dataset.seq) < `+oldest)
	check(logList(t, b))
	b.mu.Lock()
	problems := b.problems
	b.mu.Unlock()
	for _, p := range problems {
		if !strings.Contains(p, "Failed to load resource") {
			t.Errorf("the browser said %s", p)
		}
	}
}

// At a hub the log shows the events of lights of two Pis, and Why? asks
// a light of a Pi.
func TestPageLogHouse(t *testing.T) {
	t.Parallel()
	hub, nc := startHouse(t, []string{"kitchen"}, []string{"porch"})
	for _, light := range []string{"kitchen", "porch"} {
		lumentest.WaitFor(t, 30*time.Second, light+" at the hub", func() bool {
			m, err := nc.Request("lumen."+light+".cmd.fire", []byte(`{"transition":"button_click"}`), 5*time.Second)
			return err == nil && bytes.Contains(m.Data, []byte(`"ok":true`))
		})
	}
	b := newBrowser(t)
	b.do(t, "load the house", chromedp.Navigate(hub.Page(t)), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
	// The house copies each Pi's journal: the events come within moments.
	lumentest.WaitFor(t, 30*time.Second, "both Pis' events", func() bool {
		b.do(t, "load the house", chromedp.Navigate(hub.Page(t)), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
		b.waitPage(t, "the log", `performance.getEntriesByName("lumen-log").length > 0`)
		return eval[bool](t, b, `!!document.querySelector('#log > li[data-light="kitchen"]') && !!document.querySelector('#log > li[data-light="porch"]')`)
	})
	for _, e := range logList(t, b) {
		if strings.ContainsAny(e.Words, "{}") || e.Words == "" {
			t.Errorf("%s %s %s reads %q", e.Light, e.Seq, e.Type, e.Words)
		}
	}
	if !eval[bool](t, b, `!document.querySelector(".log-light").hidden && document.querySelectorAll("#log-light option").length === 3`) {
		t.Error("no Light select with all, kitchen and porch")
	}
	// The house's log pages by the house copy's sequences: each event
	// once, both Pis'.
	seen, lights := map[string]bool{}, map[string]bool{}
	for url, n := hub.Page(t)+"api/v1/log?limit=3", 0; ; n++ {
		if n > 100 {
			t.Fatal("no end to the house's pages")
		}
		code, r := logGet(t, url)
		if code != 200 {
			t.Fatalf("%s: %d %s", url, code, r.Error)
		}
		for _, e := range r.Entries {
			k := e.Light + ":" + strconv.FormatUint(e.Seq, 10)
			if seen[k] {
				t.Errorf("%s twice", k)
			}
			seen[k], lights[e.Light] = true, true
		}
		if r.Next == 0 {
			break
		}
		url = hub.Page(t) + "api/v1/log?limit=3&before=" + strconv.FormatUint(r.Next, 10)
	}
	if !lights["kitchen"] || !lights["porch"] || len(seen) < 8 {
		t.Errorf("the house's log: %d events of %v", len(seen), lights)
	}
	// A new event of a Pi shows live.
	request2 := func(light, verb, body string) {
		t.Helper()
		if m, err := nc.Request("lumen."+light+".cmd."+verb, []byte(body), 5*time.Second); err != nil || !bytes.Contains(m.Data, []byte(`"ok":true`)) {
			t.Fatalf("%s %s: %v", light, verb, err)
		}
	}
	request2("porch", "set_var", `{"name":"zz","value":7}`)
	b.waitPage(t, "porch's new event", `[...document.querySelectorAll('#log > li[data-light="porch"] .words')].some((w) => w.textContent.startsWith("set zz = 7"))`)
	// One light.
	b.do(t, "porch only", chromedp.SetValue(chromedp.CSS(`#log-light`), "porch"), chromedp.Evaluate[chromedp.Void](`document.getElementById("log-light").dispatchEvent(new Event("change"))`))
	b.waitPage(t, "porch only", `(() => { const l = [...document.querySelectorAll("#log > li")]; return l.length > 0 && l.every((li) => li.dataset.light === "porch") })()`)
	// Why? of porch's state change.
	entry := `#log > li[data-light="porch"][data-type="out.state"]`
	b.do(t, "why", chromedp.Click(chromedp.CSS(entry+` button.why`)))
	b.waitPage(t, "the answer", `document.querySelector('`+entry+` .why-summary') !== null`)
	if why := b.text(t, entry+` .why-body`); !strings.Contains(why, "porch is") || !strings.Contains(why, "Rule") {
		t.Errorf("Why? at the hub:\n%s", why)
	}
}
