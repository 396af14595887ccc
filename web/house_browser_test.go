package web_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// joinHouse registers pi at the hub of hubData with lights and starts it
// (simulated hardware; args more, e.g. --http).
func joinHouse(t *testing.T, hubData, leaf, pi string, lights []string, args ...string) *lumentest.Daemon {
	t.Helper()
	creds := filepath.Join(t.TempDir(), pi+".creds")
	add := []string{"hub", "pi", "add", pi, "--data", hubData, "--out", creds}
	up := []string{"--hub", "tls://" + leaf, "--creds", creds, "--hardware", "sim"}
	for _, l := range lights {
		add = append(add, "--light", l)
		up = append(up, "--light", l)
	}
	if out, err := exec.Command(lumentest.Bin(t), add...).CombinedOutput(); err != nil {
		t.Fatalf("lumen %s: %v\n%s", strings.Join(add, " "), err, out)
	}
	return lumentest.Start(t, t.TempDir(), append(up, args...)...)
}

// startHouse starts a hub serving the house's page, with a Pi for each
// list of lights (pia, pib, …); and connects to the hub.
func startHouse(t *testing.T, lights ...[]string) (*lumentest.Daemon, *nats.Conn) {
	t.Helper()
	hubData := t.TempDir()
	hub := lumentest.StartHub(t, hubData, "--http", "127.0.0.1:0")
	for i, ls := range lights {
		joinHouse(t, hubData, hub.Leaf, "pi"+string(rune('a'+i)), ls)
	}
	return hub, lumentest.Connect(t, hub.URL)
}

// hubWithPorch is a house of one Pi, pia, running porch.
func hubWithPorch(t *testing.T) (*lumentest.Daemon, *nats.Conn) {
	t.Helper()
	return startHouse(t, []string{"porch"})
}

// houseState is light's state, asked at the hub.
func houseState(t *testing.T, nc *nats.Conn, light string) string {
	t.Helper()
	m, err := nc.Request("lumen."+light+".cmd.get", []byte(`{}`), 5*time.Second)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	_, rest, _ := bytes.Cut(m.Data, []byte(`"state":"`))
	st, _, _ := bytes.Cut(rest, []byte(`"`))
	return string(st)
}

// The house at lumen hub --http: every light of every Pi by room (or
// group), each Pi with a link to its own page, controls that reach a
// light on any Pi, All off, and a light whose Pi is gone shown as
// unreachable, live and when the page is loaded again.
func TestPageHouse(t *testing.T) {
	t.Parallel()
	hubData := t.TempDir()
	hub := lumentest.StartHub(t, hubData, "--http", "127.0.0.1:0")
	a := joinHouse(t, hubData, hub.Leaf, "pia", []string{"kitchen", "hall"}, "--group", "down=hall", "--http", "127.0.0.1:0")
	joinHouse(t, hubData, hub.Leaf, "pib", []string{"porch", "study"})
	nc := lumentest.Connect(t, hub.URL)
	for light, room := range map[string]string{"kitchen": "kitchen", "porch": "outside", "study": "outside"} {
		lumentest.WaitFor(t, 30*time.Second, light+" at the hub", func() bool {
			m, err := nc.Request("lumen."+light+".cmd.set_names", []byte(`{"room":"`+room+`"}`), 5*time.Second)
			return err == nil && bytes.Contains(m.Data, []byte(`"ok":true`))
		})
	}
	page := hub.Page(t)
	b := newBrowser(t)
	// The directory learns rooms within a look or two.
	lumentest.WaitFor(t, 30*time.Second, "the house view with its rooms", func() bool {
		b.do(t, "load the house", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
		return eval[int](t, b, `document.querySelectorAll('.area').length`) == 3
	})
	b.waitPage(t, "the controls", `document.body.dataset.ready === "1"`)

	// By room, then group; each light under its own.
	type area struct{ Heading, Lights string }
	got := eval[[]area](t, b, `[...document.querySelectorAll('.area')].map((a) => ({Heading: a.querySelector('h2').textContent,
		Lights: [...a.querySelectorAll('.light')].map((l) => l.dataset.light).join(" ")}))`)
	want := []area{{"kitchen", "kitchen"}, {"outside", "porch study"}, {"Group down", "hall"}}
	if len(got) != len(want) {
		t.Fatalf("the house's areas: %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("area %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// Each Pi, with its own page when the hub can reach it.
	if href := eval[string](t, b, `document.querySelector('.pi[data-pi="pia"] a').href`); href != a.Page(t) {
		t.Errorf("pia's link is %q, want its page %q", href, a.Page(t))
	}
	if got := b.text(t, `.pi[data-pi="pib"]`); !strings.Contains(got, "no page reachable from here") || !strings.Contains(got, "connected") {
		t.Errorf("pib, which serves no page: %q", got)
	}
	if href := eval[string](t, b, `document.querySelector('section[data-light="hall"] .where a').href`); href != a.Page(t) {
		t.Errorf("hall's Pi link is %q", href)
	}

	// A control reaches a light of another Pi through the hub.
	porch := `section[data-light="porch"]`
	b.do(t, "porch: power", chromedp.Click(chromedp.CSS(porch+` .power`)))
	lumentest.WaitFor(t, 10*time.Second, "porch on", func() bool { return houseState(t, nc, "porch") != "off" })
	// A change over NATS shows within 500 ms.
	if m, err := nc.Request("lumen.study.cmd.set_color", []byte(`{"name":"blue"}`), 5*time.Second); err != nil || !bytes.Contains(m.Data, []byte(`"ok":true`)) {
		t.Fatalf("set_color study: %v", err)
	}
	b.within500(t, "study blue", `document.querySelector('section[data-light="study"] circle').getAttribute("fill") === "rgb(0,0,255)"`)

	// Layout and accessibility of the house view.
	eval[any](t, b, `(() => { for (const d of document.querySelectorAll("details")) d.open = true; return null })()`)
	checkLayout(t, b, "house", false)
	checkAxe(t, b, axeScript(t))
	eval[any](t, b, `(() => { for (const d of document.querySelectorAll("details")) d.open = false; return null })()`)

	// All off, over every Pi.
	for _, l := range []string{"kitchen", "hall", "porch", "study"} {
		if m, err := nc.Request("lumen."+l+".cmd.power", []byte(`{"on":true}`), 5*time.Second); err != nil || !bytes.Contains(m.Data, []byte(`"ok":true`)) {
			t.Fatalf("power on %s: %v", l, err)
		}
	}
	b.do(t, "all off", chromedp.Click(chromedp.CSS(`.all-off`)))
	b.waitPage(t, "all off said", `document.querySelector('.house-note').textContent === "4 off"`)
	for _, l := range []string{"kitchen", "hall", "porch", "study"} {
		if st := houseState(t, nc, l); st != "off" {
			t.Errorf("after All off %s is %s", l, st)
		}
	}
	// A room's All off turns off that room only.
	for _, l := range []string{"kitchen", "porch"} {
		if m, err := nc.Request("lumen."+l+".cmd.power", []byte(`{"on":true}`), 5*time.Second); err != nil || !bytes.Contains(m.Data, []byte(`"ok":true`)) {
			t.Fatalf("power on %s: %v", l, err)
		}
	}
	b.do(t, "outside off", chromedp.Click(chromedp.CSS(`.area[data-area="outside"] .area-off`)))
	lumentest.WaitFor(t, 10*time.Second, "porch off", func() bool { return houseState(t, nc, "porch") == "off" })
	if st := houseState(t, nc, "kitchen"); st == "off" {
		t.Error("the outside's All off turned off the kitchen")
	}

	// Pi A goes: its lights show as unreachable, live.
	a.Kill()
	b.waitPage(t, "kitchen unreachable", `document.querySelector('section[data-light="kitchen"]').classList.contains("unreachable") &&
		document.querySelector('section[data-light="kitchen"] .body').hidden &&
		document.querySelector('.pi[data-pi="pia"] .pi-status').textContent === "away"`)
	if got := b.text(t, `section[data-light="hall"] .reach`); !strings.Contains(got, "unreachable") {
		t.Errorf("hall, whose Pi is gone, says %q", got)
	}
	// And when the page is loaded again.
	b.do(t, "load the house again", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
	if !eval[bool](t, b, `document.querySelector('section[data-light="hall"]').classList.contains("unreachable") && !document.querySelector('section[data-light="porch"]').classList.contains("unreachable")`) {
		t.Error("the page loaded again does not show hall unreachable and porch reachable")
	}
	b.do(t, "all off without pia", chromedp.Click(chromedp.CSS(`.all-off`)))
	b.waitPage(t, "All off names the unreachable", `(() => { const n = document.querySelector('.house-note').textContent;
		return n.startsWith("2 off; unreachable: ") && n.includes("kitchen") && n.includes("hall") })()`)
	b.keepScreenshot(t, "house with a Pi away")

	// A Pi that joins while the page is open: its light's events come
	// into the log (and its Light select), and the page says it is new
	// and draws it on asking.
	joinHouse(t, hubData, hub.Leaf, "pic", []string{"attic"})
	b.waitPage(t, "attic said new", `(() => { const n = document.querySelector('.house-new');
		return !n.hidden && n.textContent.includes("New in the house: attic.") })()`)
	lumentest.WaitFor(t, 30*time.Second, "attic on at the hub", func() bool {
		m, err := nc.Request("lumen.attic.cmd.power", []byte(`{"on":true}`), 5*time.Second)
		return err == nil && bytes.Contains(m.Data, []byte(`"ok":true`))
	})
	b.waitPage(t, "attic's event in the log", `[...document.querySelectorAll('#log li')].some((li) => li.dataset.light === "attic") &&
		[...document.querySelectorAll('#log-light option')].map((o) => o.value).join(" ") === " attic hall kitchen porch study"`)
	b.click(t, "show the new light", `.house-show`)
	b.do(t, "attic drawn", chromedp.WaitVisible(chromedp.CSS(`section[data-light="attic"]`)), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
	if !eval[bool](t, b, `document.querySelector('.house-new').hidden`) {
		t.Error("attic is still said new once drawn")
	}
}
