package web_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// The Change and Coming up panels in real Chromium, against the built
// binary, checked over NATS.

const comingSec = `section[data-light="demo"]`

// comingFill sets the form controls named in values (CSS selector under
// the light → value) as a person would, with input and change events.
func comingFill(t *testing.T, b *browser, values map[string]string) {
	t.Helper()
	js, _ := json.Marshal(values)
	eval[any](t, b, `(() => { for (const [sel, v] of Object.entries(`+string(js)+`)) {
		const el = document.querySelector('`+comingSec+` ' + sel);
		if (!el) throw new Error("no " + sel);
		el.value = v;
		el.dispatchEvent(new Event("input", {bubbles: true}));
		el.dispatchEvent(new Event("change", {bubbles: true}));
	} return null })()`)
}

// comingClick clicks sel in the light's section.
func comingClick(t *testing.T, b *browser, what, sel string) {
	t.Helper()
	b.click(t, what, comingSec+` `+sel)
}

// comingRules is the light's rules over NATS.
func comingRules(t *testing.T, nc *nats.Conn) []map[string]any {
	t.Helper()
	var g struct {
		Rules []map[string]any `json:"rules"`
	}
	if err := json.Unmarshal([]byte(getJSON(t, nc)), &g); err != nil {
		t.Fatal(err)
	}
	return g.Rules
}

// comingPress presses the page's Click and waits for the light to be in
// state want.
func comingPress(t *testing.T, b *browser, nc *nats.Conn, want string) {
	t.Helper()
	comingClick(t, b, "press Click", `.press[data-edges=click]`)
	waitState(t, b, nc, "demo", want)
}

// A rule added by the form fires on the next click; Edit changes it in
// one input and the light follows it; Disable stops it; Delete (after
// asking) removes it; a bad condition shows the light's error and
// changes nothing.
func TestPageChangeRules(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	_, nc := openPage(t, b)
	b.open(t, "open Change", comingSec+` details.change`)
	b.waitPage(t, "the rules", `document.querySelector('`+comingSec+` .rule-list li[data-rule="r1"]') !== null && document.querySelector('`+comingSec+` .rule-form select[name=to] option[value=blue]') !== null`)
	// The transitions the light knows are offered.
	if got := eval[string](t, b, `[...document.querySelectorAll('`+comingSec+` datalist option')].map((o) => o.value).join(" ")`); got != "button_click button_double_click button_hold" {
		t.Errorf("the transitions offered: %q", got)
	}

	// Add: from any state, a click goes to blue, before the demo's rules.
	comingFill(t, b, map[string]string{".rule-form select[name=from]": "*", ".rule-form input[name=on]": "button_click",
		".rule-form select[name=to]": "blue", ".rule-form input[name=priority]": "5", ".rule-form select[name=fade_ms]": "1000"})
	comingClick(t, b, "add the rule", `.rule-form button[type=submit]`)
	b.waitPage(t, "the new rule listed", `document.querySelector('`+comingSec+` .rule-list li[data-rule="r6"]') !== null`)
	rules := comingRules(t, nc)
	added := rules[len(rules)-1]
	if added["id"] != "r6" || added["from"] != "*" || added["to"] != "blue" || added["priority"] != 5.0 || added["fade_ms"] != 1000.0 {
		t.Fatalf("the rule added: %v", added)
	}
	comingPress(t, b, nc, "blue")

	// Edit: it goes to green now, in one configuration input.
	before := len(comingHistory(t, nc))
	comingClick(t, b, "edit r6", `button[aria-label="Edit rule r6"]`)
	b.waitPage(t, "the form holds r6", `document.querySelector('`+comingSec+` .rule-form select[name=to]').value === "blue" && document.querySelector('`+comingSec+` .rule-form .save').textContent === "Save rule r6"`)
	comingFill(t, b, map[string]string{".rule-form select[name=to]": "green"})
	comingClick(t, b, "save r6", `.rule-form button[type=submit]`)
	b.waitPage(t, "r6 goes to green", `document.querySelector('`+comingSec+` .rule-list li[data-rule="r6"]').textContent.includes("→ green")`)
	if n := len(comingHistory(t, nc)) - before; n != 1 {
		t.Errorf("the edit made %d configuration inputs, want 1", n)
	}
	if rules := comingRules(t, nc); len(rules) != 6 || rules[5]["id"] != "r6" || rules[5]["to"] != "green" || rules[5]["priority"] != 5.0 {
		t.Errorf("after the edit the rules are %v", rules)
	}
	comingPress(t, b, nc, "green")

	// Disable: from green a click follows the demo's rule, to blue.
	comingClick(t, b, "disable r6", `button[aria-label="Disable rule r6"]`)
	b.waitPage(t, "r6 disabled", `document.querySelector('`+comingSec+` button[aria-label="Enable rule r6"]') !== null`)
	comingPress(t, b, nc, "blue")

	// A bad condition: the light's error by the form, nothing changed.
	before = len(comingHistory(t, nc))
	comingFill(t, b, map[string]string{".rule-form select[name=from]": "blue", ".rule-form input[name=on]": "button_click",
		".rule-form select[name=to]": "red", ".rule-form input[name=condition]": "getData('n' >"})
	comingClick(t, b, "add a bad rule", `.rule-form button[type=submit]`)
	b.waitPage(t, "the error", `document.querySelector('`+comingSec+` .rule-form .change-msg.error') !== null`)
	if msg := b.text(t, comingSec+` .rule-form .change-msg`); !strings.Contains(msg, "condition") || !strings.Contains(msg, "nothing was changed") {
		t.Errorf("the error shown: %q", msg)
	}
	if n := len(comingHistory(t, nc)); n != before || len(comingRules(t, nc)) != 6 {
		t.Errorf("a refused rule changed the configuration")
	}

	// Delete asks first, inline; Keep leaves it, Delete removes it.
	comingClick(t, b, "delete r6", `button[aria-label="Delete rule r6"]`)
	comingClick(t, b, "keep r6", `button[aria-label="Keep rule r6"]`)
	comingClick(t, b, "delete r6 again", `button[aria-label="Delete rule r6"]`)
	comingClick(t, b, "confirm", `button[aria-label="Yes, delete rule r6"]`)
	b.waitPage(t, "r6 gone", `document.querySelector('`+comingSec+` .rule-list li[data-rule="r6"]') === null`)
	for _, r := range comingRules(t, nc) {
		if r["id"] == "r6" {
			t.Errorf("r6 is still there over NATS: %v", r)
		}
	}
}

// A state added with the picker has its color; schedules added by the
// form (cron, and sun at the daemon's home) show in Coming up with their
// next time, a layer with its end; both panels pass axe and fit a phone.
func TestPageComingUp(t *testing.T) {
	t.Parallel()
	src := axeScript(t)
	b := newBrowser(t)
	_, nc := openPage(t, b, "--home", "48.85,2.35")
	b.open(t, "open Coming up", comingSec+` details.coming`)
	b.waitPage(t, "nothing is coming", `document.querySelector('`+comingSec+` .coming-none') !== null`)
	b.open(t, "open Change", comingSec+` details.change`)
	b.waitPage(t, "the forms", `document.querySelector('`+comingSec+` .state-form') !== null`)

	// A state with the picker.
	comingFill(t, b, map[string]string{".state-form input[name=name]": "teal", ".state-form input[type=color]": "#00807f"})
	comingClick(t, b, "add the state", `.state-form button[type=submit]`)
	waitLight(t, b, nc, "teal", func(g lightGet) bool { return g.stateColor("teal") == [3]float64{0, 128, 127} })
	b.waitPage(t, "teal in the rule form", `document.querySelector('`+comingSec+` .rule-form select[name=to] option[value=teal]') !== null`)

	// A cron schedule: in Coming up, within 5 minutes.
	comingFill(t, b, map[string]string{".schedule-form input[name=name]": "tick", ".schedule-form select[name=kind]": "cron",
		".schedule-form input[name=cron]": "*/5 * * * *", ".schedule-form input[name=fires]": "tick"})
	comingClick(t, b, "add the cron schedule", `.schedule-form button[type=submit]`)
	b.waitPage(t, "tick in Coming up", `(() => { const li = document.querySelector('`+comingSec+` .coming-list li[data-kind=schedule][data-name=tick]');
		return li !== null && li.querySelector("time") !== null && /^(in \d+ (s|min)|now)$/.test(li.querySelector(".rel").textContent) && li.textContent.includes("*/5 * * * *") })()`)

	// A sun schedule: the cron field gives way to the sun's.
	comingFill(t, b, map[string]string{".schedule-form select[name=kind]": "sun"})
	if eval[bool](t, b, `document.querySelector('`+comingSec+` .schedule-form input[name=cron]').offsetParent !== null`) {
		t.Error("the cron field shows for a sun schedule")
	}
	comingFill(t, b, map[string]string{".schedule-form input[name=name]": "lamps", ".schedule-form select[name=sun]": "sunset",
		".schedule-form input[name=offset]": "-30", ".schedule-form input[name=fires]": "evening"})
	comingClick(t, b, "add the sun schedule", `.schedule-form button[type=submit]`)
	b.waitPage(t, "lamps in Coming up", `(() => { const li = document.querySelector('`+comingSec+` .coming-list li[data-kind=schedule][data-name=lamps]');
		return li !== null && li.querySelector("time") !== null && li.textContent.includes("sunset −30 min") })()`)
	b.waitPage(t, "both schedules listed", `document.querySelectorAll('`+comingSec+` .schedule-list li[data-schedule]').length === 2`)
	if got := b.text(t, comingSec+` .schedule-list li[data-schedule=lamps] .words`); got != "lamps (sunset −30 min, fires evening)" {
		t.Errorf("the sun schedule listed as %q", got)
	}
	// Soonest first.
	if !eval[bool](t, b, `(() => { const t = [...document.querySelectorAll('`+comingSec+` .coming-list time')].map((e) => Date.parse(e.dateTime)); return t.every((v, i) => i === 0 || t[i-1] <= v) })()`) {
		t.Error("Coming up is not soonest first")
	}

	// A layer for ten minutes, added over NATS, shows with its end.
	request(t, nc, "append_rules", `{"rules":[{"from":"*","on":"button_click","to":"teal"}],"layer":{"name":"tenmin","ms":600000}}`)
	b.waitPage(t, "the layer in Coming up", `(() => { const li = document.querySelector('`+comingSec+` .coming-list li[data-kind=layer][data-name=tenmin]');
		return li !== null && /^in (9|10) min$/.test(li.querySelector(".rel").textContent) })()`)
	// A timer, armed by a rule's action.
	request(t, nc, "append_rules", `{"rules":[{"from":"*","on":"button_double_click","to":"red","action":"startTimer('t_back', 120000)"}]}`)
	request(t, nc, "fire", `{"transition":"button_double_click"}`)
	b.waitPage(t, "the timer in Coming up", `(() => { const li = document.querySelector('`+comingSec+` .coming-list li[data-kind=timer][data-name=t_back]');
		return li !== null && /^in (1|2) min$/.test(li.querySelector(".rel").textContent) })()`)

	// Delete a schedule, after asking.
	comingClick(t, b, "delete tick", `button[aria-label="Delete schedule tick"]`)
	comingClick(t, b, "confirm", `button[aria-label="Yes, delete schedule tick"]`)
	b.waitPage(t, "tick gone from Coming up", `document.querySelector('`+comingSec+` .coming-list li[data-name=tick]') === null && document.querySelector('`+comingSec+` .schedule-list li[data-schedule=tick]') === null`)
	if strings.Contains(getJSON(t, nc), `"name":"tick"`) {
		t.Error("the schedule tick is still there over NATS")
	}

	// A refusal by the schedule form: the light's error.
	comingFill(t, b, map[string]string{".schedule-form input[name=name]": "bad", ".schedule-form select[name=kind]": "cron",
		".schedule-form input[name=cron]": "not a cron", ".schedule-form input[name=fires]": "x"})
	comingClick(t, b, "add a bad schedule", `.schedule-form button[type=submit]`)
	b.waitPage(t, "the schedule's error", `document.querySelector('`+comingSec+` .schedule-form .change-msg.error') !== null`)

	// Edit in progress and a question asked, for axe and the layout.
	comingClick(t, b, "edit r1", `button[aria-label="Edit rule r1"]`)
	comingClick(t, b, "delete r2", `button[aria-label="Delete rule r2"]`)
	checkAxe(t, b, src)
	checkLayout(t, b, "Coming up and Change", false)
}

// At a hub, the same panels for a light of a Pi: a rule added by the
// form fires on the next click there, a rule edited in one input, and a
// schedule added by the form shows in Coming up.
func TestPageComingAtAHub(t *testing.T) {
	t.Parallel()
	hub, nc := hubWithPorch(t)
	lumentest.WaitFor(t, 30*time.Second, "porch at the hub", func() bool { return houseState(t, nc, "porch") == "off" })
	b := newBrowser(t)
	lumentest.WaitFor(t, 30*time.Second, "porch on the house's page", func() bool {
		b.do(t, "load the house", chromedp.Navigate(hub.Page(t)), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
		return eval[bool](t, b, `document.querySelector('section[data-light="porch"]:not(.unreachable)') !== null`)
	})
	sec := `section[data-light="porch"]`
	fill := func(values map[string]string) {
		t.Helper()
		js, _ := json.Marshal(values)
		eval[any](t, b, `(() => { for (const [sel, v] of Object.entries(`+string(js)+`)) {
			const el = document.querySelector('`+sec+` ' + sel);
			el.value = v;
			el.dispatchEvent(new Event("change", {bubbles: true}));
		} return null })()`)
	}
	click := func(what, sel string) {
		t.Helper()
		b.click(t, what, sec+` `+sel)
	}
	b.open(t, "open Coming up", sec+` details.coming`)
	b.open(t, "open Change", sec+` details.change`)
	b.waitPage(t, "porch's forms", `document.querySelector('`+sec+` .rule-form select[name=to] option[value=blue]') !== null`)
	fill(map[string]string{".rule-form select[name=from]": "off", ".rule-form input[name=on]": "button_click", ".rule-form select[name=to]": "blue", ".rule-form input[name=priority]": "5"})
	click("add the rule", `.rule-form button[type=submit]`)
	b.waitPage(t, "r6 listed", `document.querySelector('`+sec+` .rule-list li[data-rule="r6"]') !== null`)
	click("press Click", `.press[data-edges=click]`)
	lumentest.WaitFor(t, 10*time.Second, "porch blue", func() bool { return houseState(t, nc, "porch") == "blue" })

	click("edit r6", `button[aria-label="Edit rule r6"]`)
	fill(map[string]string{".rule-form select[name=from]": "blue", ".rule-form select[name=to]": "green"})
	click("save r6", `.rule-form button[type=submit]`)
	b.waitPage(t, "r6 edited", `document.querySelector('`+sec+` .rule-list li[data-rule="r6"]').textContent.includes("blue → green")`)
	click("press Click", `.press[data-edges=click]`)
	lumentest.WaitFor(t, 10*time.Second, "porch green", func() bool { return houseState(t, nc, "porch") == "green" })

	fill(map[string]string{".schedule-form input[name=name]": "tick", ".schedule-form input[name=cron]": "*/5 * * * *", ".schedule-form input[name=fires]": "tick"})
	click("add the schedule", `.schedule-form button[type=submit]`)
	b.waitPage(t, "tick in Coming up", `document.querySelector('`+sec+` .coming-list li[data-kind=schedule][data-name=tick] time') !== null`)
}
