package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	_ "image/png" // screenshots
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
)

// The page in real headless Chromium (Debian's, installed by the
// Taskfile's debs task), driven with chromedp, against the built binary.

// chromium finds the browser; the suite needs it, so a machine without
// it fails here rather than skip.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("LUMEN_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium: install Debian's chromium (the Taskfile's debs task does), or set LUMEN_CHROMIUM")
	return ""
}

// browser is a page in a fresh headless Chromium, with what it logged
// and every URL it requested.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string // console errors, exceptions, CSP reports
	requests []string
}

func newBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.WindowSize(800, 1000),
	)
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{ctx: ctx}
	console := chromedp.Console(ctx)
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				b.mu.Lock()
				b.problems = append(b.problems, string(m.Type)+": "+m.Text)
				b.mu.Unlock()
			}
		}
	}()
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.requests = append(b.requests, ev.Request.URL)
			b.mu.Unlock()
		}
	}()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	return b
}

// do runs actions, keeping a screenshot as a test artifact when they
// fail.
func (b *browser) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.keepScreenshot(t, what)
		t.Fatalf("%s: %v", what, err)
	}
}

// text is the visible text of the element sel, once there is one. It is
// read by the page itself: chromedp's copy of the DOM may lag behind a
// list the page has just drawn anew (its nodes then are "not found").
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	q, _ := json.Marshal(sel)
	b.waitPage(t, "the element "+sel, `document.querySelector(`+string(q)+`) !== null`)
	return eval[string](t, b, `(document.querySelector(`+string(q)+`) || {}).innerText || ""`)
}

// click clicks the middle of the element sel with the mouse. A panel is
// drawn anew at each change, and chromedp's copy of the DOM may lag
// behind it (chromedp.Click then waits for a node it never gets, or
// clicks one no longer there): the element is found by the page, the
// click is a real one at its place, once the page says the element is
// what is there (a panel that has just opened may still push it down).
func (b *browser) click(t *testing.T, what, sel string) {
	t.Helper()
	q, _ := json.Marshal(sel)
	b.waitPage(t, what, `document.querySelector(`+string(q)+`) !== null`)
	where := `(() => { const e = document.querySelector(` + string(q) + `); if (!e) return [];
		e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); const x = r.x + r.width / 2, y = r.y + r.height / 2;
		const at = document.elementFromPoint(x, y); return at && e.contains(at) ? [x, y] : [] })()`
	var xy []float64
	lumentest.WaitFor(t, 10*time.Second, what+": the element where it is drawn", func() bool {
		if xy = eval[[]float64](t, b, where); len(xy) == 2 {
			return true
		}
		time.Sleep(50 * time.Millisecond)
		return false
	})
	b.do(t, what, chromedp.MouseClickXY(xy[0], xy[1]))
}

// open opens the panel details (a details element's selector) with a
// click on its summary, and clicks again should one fall beside it.
func (b *browser) open(t *testing.T, what, details string) {
	t.Helper()
	q, _ := json.Marshal(details)
	isOpen := `document.querySelector(` + string(q) + `)?.open === true`
	lumentest.WaitFor(t, 20*time.Second, what, func() bool {
		if eval[bool](t, b, isOpen) {
			return true
		}
		b.click(t, what, details+` > summary`)
		return eval[bool](t, b, isOpen)
	})
}

func (b *browser) keepScreenshot(t *testing.T, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Logf("no screenshot: %v", err)
		return
	}
	name := filepath.Join(t.ArtifactDir(), strings.NewReplacer(" ", "-", "/", "-").Replace(what)+".png")
	if err := os.WriteFile(name, png, 0o644); err == nil {
		t.Logf("screenshot: %s", name)
	}
}

// swatchColor reads the center pixel of light's swatch from a
// screenshot: what a person sees.
func (b *browser) swatchColor(t *testing.T, light string) (r, g, bl uint32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(`section[data-light="`+light+`"] .swatch`)))
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatal(err)
	}
	c := img.Bounds()
	r, g, bl, _ = img.At((c.Min.X+c.Max.X)/2, (c.Min.Y+c.Max.Y)/2).RGBA()
	return r >> 8, g >> 8, bl >> 8
}

// waitSwatch waits up to a second for light's swatch to look like want.
func (b *browser) waitSwatch(t *testing.T, light, want string, ok func(r, g, b uint32) bool) {
	t.Helper()
	var r, g, bl uint32
	if !lumentest.Within(time.Second, func() bool { r, g, bl = b.swatchColor(t, light); return ok(r, g, bl) }) {
		b.keepScreenshot(t, "swatch not "+want)
		t.Fatalf("the swatch of %s is rgb(%d,%d,%d), want %s", light, r, g, bl, want)
	}
}

func TestPageInChromium(t *testing.T) {
	t.Parallel()
	d := lumentest.Start(t, t.TempDir(), "--http", "127.0.0.1:0", "--hardware", "sim")
	page := d.Page(t)
	nc := lumentest.Connect(t, d.URL)
	b := newBrowser(t)

	// It loads, live, with no console error and no request elsewhere.
	b.do(t, "load the page", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`section[data-light="demo"] .press[data-edges=click]`)),
		chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))

	// The virtual button: a click turns the light red, on the LED and
	// in the swatch.
	b.do(t, "press the button", chromedp.Click(chromedp.CSS(`section[data-light="demo"] .press[data-edges=click]`)))
	waitState(t, b, nc, "demo", "red")
	b.waitSwatch(t, "demo", "red", func(r, g, bl uint32) bool { return r >= 128 && g <= 60 && bl <= 60 })

	// A click from the CLI shows in the swatch and the log within 500 ms.
	if out, err := exec.Command(lumentest.Bin(t), "fire", "button_click", "--server", d.URL).CombinedOutput(); err != nil {
		t.Fatalf("lumen fire: %v\n%s", err, out)
	}
	var state, logText string
	if !lumentest.Within(500*time.Millisecond, func() bool {
		state, logText = b.text(t, `section[data-light="demo"] .state`), b.text(t, `#log`)
		return state == "green" && strings.Contains(logText, "out.state")
	}) {
		b.keepScreenshot(t, "late")
		t.Fatalf("500 ms after a fire from NATS the page shows %q; log:\n%s", state, logText)
	}
	b.waitSwatch(t, "demo", "green", func(r, g, bl uint32) bool { return g >= 128 && r <= 60 && bl <= 60 })

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		t.Errorf("the page logged problems:\n%s", strings.Join(b.problems, "\n"))
	}
	u, _ := url.Parse(page)
	for _, r := range b.requests {
		if ru, err := url.Parse(r); err != nil || ru.Host != u.Host {
			t.Errorf("the page requested %s, not of %s", r, u.Host)
		}
	}
}

// waitState waits until light is in state over NATS.
func waitState(t *testing.T, b *browser, nc *nats.Conn, light, state string) {
	t.Helper()
	if !lumentest.Within(10*time.Second, func() bool {
		m, err := nc.Request("lumen."+light+".cmd.get", []byte(`{}`), 5*time.Second)
		return err == nil && bytes.Contains(m.Data, []byte(`"state":"`+state+`"`))
	}) {
		b.keepScreenshot(t, "state "+state)
		t.Fatalf("%s never became %s", light, state)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.keepScreenshot(t, "eval")
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitPage waits until a JavaScript predicate holds in the page.
func (b *browser) waitPage(t *testing.T, what, predicate string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](predicate, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		b.keepScreenshot(t, what)
		t.Fatalf("%s: %v", what, err)
	}
}

// openPage starts a daemon with args and HTTP, and loads its page.
func openPage(t *testing.T, b *browser, args ...string) (*lumentest.Daemon, *nats.Conn) {
	t.Helper()
	d := lumentest.Start(t, t.TempDir(), append([]string{"--http", "127.0.0.1:0", "--hardware", "sim"}, args...)...)
	nc := lumentest.Connect(t, d.URL)
	b.do(t, "load the page", chromedp.Navigate(d.Page(t)), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
	return d, nc
}

func getJSON(t *testing.T, nc *nats.Conn) string {
	t.Helper()
	m, err := nc.Request("lumen.demo.cmd.get", []byte(`{}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return string(m.Data)
}

// setEditor puts text in the editor of the light section sec.
func setEditor(t *testing.T, b *browser, sec, text string) {
	t.Helper()
	js, _ := json.Marshal(text)
	eval[any](t, b, `(() => { document.querySelector('`+sec+` .yaml').value = `+string(js)+`; return null })()`)
}

// The editor shows the configuration as lumen export does; a mistake is
// shown at its line, with the cursor on it, and nothing is applied; a
// good change is applied and the panels follow.
func TestPageEditor(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	_, nc := openPage(t, b)
	sec := `section[data-light="demo"]`
	b.do(t, "open the editor", chromedp.Click(chromedp.CSS(sec+` details.config summary`)))
	b.waitPage(t, "the configuration loads", `document.querySelector('`+sec+` .yaml').value.includes("states:")`)
	before := getJSON(t, nc)

	// A YAML mistake on line 3.
	bad := "states:\n  - name: teal\n    r: [0, 128\n"
	setEditor(t, b, sec, bad)
	b.do(t, "apply", chromedp.Click(chromedp.CSS(sec+` .apply`)))
	b.waitPage(t, "the error", `document.querySelector('`+sec+` .msg').classList.contains("error")`)
	msg := b.text(t, sec+` .msg`)
	if !strings.Contains(msg, "line ") || !strings.Contains(msg, "nothing was applied") {
		t.Errorf("the editor says %q", msg)
	}
	if caret := eval[float64](t, b, `document.querySelector('`+sec+` .yaml').selectionStart`); caret == 0 {
		t.Errorf("the cursor is not on the mistake's line")
	}
	// A refusal of the light, at the line of the field it names.
	bad = "states:\n  - name: teal\n    r: 0\n    g: 0\n    b: 0\nrules:\n  - from: teal\n    on: button_click\n    to: nowhere\n"
	setEditor(t, b, sec, bad)
	b.do(t, "apply", chromedp.Click(chromedp.CSS(sec+` .apply`)))
	b.waitPage(t, "the refusal", `document.querySelector('`+sec+` .msg').textContent.includes("nowhere")`)
	// Nothing changed but the sequence: the refusal is journaled.
	noSeq := regexp.MustCompile(`"seq":\d+`)
	if after := getJSON(t, nc); noSeq.ReplaceAllString(after, "") != noSeq.ReplaceAllString(before, "") {
		t.Errorf("a refused configuration changed the light:\n%s\n%s", before, after)
	}

	// A good one: reload, add a state, check, apply.
	setEditor(t, b, sec, "")
	b.do(t, "reload", chromedp.Click(chromedp.CSS(sec+` .reload`)))
	b.waitPage(t, "the configuration reloads", `document.querySelector('`+sec+` .yaml').value.includes("- name: red")`)
	eval[any](t, b, `(() => { const a = document.querySelector('`+sec+` .yaml'); a.value = a.value.replace("states:\n", "states:\n  - name: teal\n    r: 0\n    g: 128\n    b: 128\n"); return null })()`)
	b.do(t, "check", chromedp.Click(chromedp.CSS(sec+` .check`)))
	b.waitPage(t, "the check", `document.querySelector('`+sec+` .msg').textContent.includes("+ state teal")`)
	if strings.Contains(getJSON(t, nc), `"teal"`) {
		t.Error("a check applied the configuration")
	}
	b.do(t, "apply", chromedp.Click(chromedp.CSS(sec+` .apply`)))
	b.waitPage(t, "the apply", `document.querySelector('`+sec+` .msg').textContent.startsWith("applied")`)
	if !strings.Contains(getJSON(t, nc), `"teal"`) {
		t.Error("apply did not add the state")
	}
	b.do(t, "open the model", chromedp.Click(chromedp.CSS(sec+` details.model summary`)))
	b.waitPage(t, "the model shows teal", `document.querySelector('`+sec+` .model-body').textContent.includes("teal")`)
	b.waitPage(t, "teal's preview", `[...document.querySelectorAll('`+sec+` .model-body tr')].some((tr) => tr.textContent.includes("teal") && tr.querySelector(".preview circle").getAttribute("fill") === "rgb(0,128,128)")`)
}

// The chat: the counter pattern set up through the page, each step shown
// as it is journaled; then a deletion that needs approval, approved from
// the page.
func TestPageAgent(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{{Name: "getPattern", Args: `{"name":"counter"}`}}},
		agenttest.Step{Calls: []agenttest.Call{
			{Name: "createState", Args: `{"name":"party","r":"random()*255","g":"random()*255","b":"random()*255"}`},
			{Name: "createState", Args: `{"name":"spare","r":1,"g":2,"b":3}`},
			{Name: "appendRules", Args: `{"rules":[
				{"from":"*","on":"button_click","to":"party","condition":"getData('clicks') === undefined","action":"setData('clicks', 2)","priority":10},
				{"from":"party","on":"button_click","to":"party","condition":"getData('clicks') > 0","action":"setData('clicks', getData('clicks') - 1)","priority":10},
				{"from":"party","on":"button_click","to":"off","condition":"getData('clicks') === 0","action":"setData('clicks', undefined)","priority":10}]}`},
		}},
		agenttest.Step{Calls: []agenttest.Call{{Name: "done", Args: `{"message":"The next 3 clicks show random colors, then it goes back to off."}`}}},
		agenttest.Step{Calls: []agenttest.Call{{Name: "deleteState", Args: `{"name":"spare"}`}}},
		agenttest.Step{Calls: []agenttest.Call{{Name: "done", Args: `{"message":"Deleted spare."}`}}},
	)
	defer srv.Close()
	b := newBrowser(t)
	_, nc := openPage(t, b, "--openai-base-url", srv.BaseURL(), "--model", "scripted")
	sec := `section[data-light="demo"]`
	ask := func(text string) {
		b.do(t, "ask", chromedp.Click(chromedp.CSS(sec+` details.agent summary`)), chromedp.SendKeys(chromedp.CSS(sec+` form.ask input`), text),
			chromedp.Click(chromedp.CSS(sec+` form.ask button[type=submit]`)))
	}
	ask("next 3 clicks random colors, then back to normal")
	b.waitPage(t, "the answer", `document.querySelector('`+sec+` .chat').textContent.includes("done: The next 3 clicks")`)
	chat := b.text(t, sec+` .chat`)
	for _, want := range []string{"page: next 3 clicks", "✓ getPattern", "✓ createState", "→ appendRules(", "✓ appendRules"} {
		if !strings.Contains(chat, want) {
			t.Errorf("the chat lacks %q:\n%s", want, chat)
		}
	}
	if g := getJSON(t, nc); !strings.Contains(g, `"party"`) || !strings.Contains(g, `getData('clicks') === undefined`) {
		t.Errorf("the counter pattern is not set up: %s", g)
	}

	b.do(t, "close the agent panel", chromedp.Click(chromedp.CSS(sec+` details.agent summary`)))
	ask("forget the spare state")
	b.waitPage(t, "the approval", `!!document.querySelector('`+sec+` .chat li.wait button.approve')`)
	if !strings.Contains(getJSON(t, nc), `"spare"`) {
		t.Fatal("spare was deleted before it was approved")
	}
	b.do(t, "approve", chromedp.Click(chromedp.CSS(sec+` .chat li.wait button.approve`)))
	b.waitPage(t, "the end", `document.querySelector('`+sec+` .chat').textContent.includes("done: Deleted spare.")`)
	if chat := b.text(t, sec+` .chat`); !strings.Contains(chat, "approved by page") {
		t.Errorf("the chat does not say who approved:\n%s", chat)
	}
	if strings.Contains(getJSON(t, nc), `"spare"`) {
		t.Error("spare is still there after the approval")
	}
	if err := srv.Err(); err != nil {
		t.Error(err)
	}
}

// The microphone: Chromium's fake capture plays an espeak-ng recording
// while the button is held; the page sends it to talk as WAV, and the
// spoken request is carried out.
func TestPageMicrophone(t *testing.T) {
	t.Parallel()
	speech := filepath.Join(t.TempDir(), "red.wav")
	if out, err := exec.Command("espeak-ng", "-w", speech, "turn the light red").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng (the Taskfile's debs task installs it): %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name, transcript string
		steps            []agenttest.Step
		args             []string
	}{
		{"model", "turn the light red for tonight", []agenttest.Step{
			{Calls: []agenttest.Call{{Name: "setState", Args: `{"name":"red"}`}}},
			{Calls: []agenttest.Call{{Name: "done", Args: `{"message":"It is red."}`}}},
		}, []string{"--model", "scripted"}},
		// Speech to text with no chat model: an everyday command spoken
		// is understood by the light itself.
		{"speech only", "turn the light red", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := agenttest.New(tc.steps...)
			defer srv.Close()
			srv.SetTranscript(tc.transcript)
			b := newBrowser(t,
				chromedp.Flag("use-fake-ui-for-media-stream", true),
				chromedp.Flag("use-fake-device-for-media-stream", true),
				chromedp.Flag("use-file-for-fake-audio-capture", speech+"%noloop"),
				chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
			)
			_, nc := openPage(t, b, append([]string{"--openai-base-url", srv.BaseURL()}, tc.args...)...)
			sec := `section[data-light="demo"]`
			b.do(t, "open the agent", chromedp.Click(chromedp.CSS(sec+` details.agent summary`)))
			if eval[bool](t, b, `!document.querySelector('`+sec+` .mic') || document.querySelector('`+sec+` .mic').disabled`) {
				t.Fatalf("no microphone, or a disabled one: %s", b.text(t, sec+` details.agent`))
			}
			type point struct{ X, Y float64 }
			b.do(t, "see the microphone", chromedp.ScrollIntoView(chromedp.CSS(sec+` .mic`)))
			p := eval[point](t, b, `(() => { const r = document.querySelector('`+sec+` .mic').getBoundingClientRect(); return {X: r.x + r.width/2, Y: r.y + r.height/2} })()`)
			b.do(t, "hold the microphone",
				chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, p.X, p.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
				chromedp.Sleep(2500*time.Millisecond),
				chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, p.X, p.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
			if !lumentest.Within(20*time.Second, func() bool {
				return strings.Contains(b.text(t, sec+` .chat`), "heard: "+tc.transcript)
			}) {
				b.keepScreenshot(t, "no answer")
				t.Fatalf("the chat after speaking:\n%s", b.text(t, sec+` .chat`))
			}
			waitState(t, b, nc, "demo", "red")
			if audio := srv.Audio(); len(audio) != 1 || !bytes.HasPrefix(audio[0], []byte("RIFF")) {
				t.Errorf("the transcription got %d recordings", len(audio))
			}
		})
	}
}

// The page says when the daemon is away and comes back by itself: the
// event log resumes where it stopped (the browser sends Last-Event-ID),
// and the swatch follows the LED again.
func TestPageReconnects(t *testing.T) {
	t.Parallel()
	addr := lumentest.FreeAddr(t)
	data := t.TempDir()
	args := []string{"--http", addr, "--hardware", "sim"}
	d, err := lumentest.Launch(lumentest.Bin(t), data, args...)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.do(t, "load the page", chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	b.waitPage(t, "the page to say it is away", `document.querySelector('#conn').classList.contains("down")`)
	if s := b.text(t, "#conn"); !strings.Contains(s, "reconnecting") {
		t.Errorf("away, the page says %q", s)
	}
	d = lumentest.Start(t, data, args...)
	b.waitPage(t, "the page to be live again", `document.querySelector('#conn').classList.contains("live")`)
	nc := lumentest.Connect(t, d.URL)
	if _, err := nc.Request("lumen.demo.cmd.fire", []byte(`{"transition":"button_click"}`), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	b.waitPage(t, "the swatch to follow the LED again", `document.querySelector('section[data-light="demo"] .state').textContent === "red"`)
	b.waitPage(t, "the log to go on", `document.querySelector('#log').textContent.includes("out.state")`)
}

// The swatch shows the color a person gave (255,140,40 is #ff8c28), not
// the LED's duty after gamma (#ff4404): when the page loads, and as the
// light changes.
func TestPageSwatchShowsTheColor(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	d := lumentest.Start(t, t.TempDir(), "--http", "127.0.0.1:0", "--hardware", "sim")
	nc := lumentest.Connect(t, d.URL)
	for _, req := range [][2]string{
		{"create_state", `{"name":"amber","r":255,"g":140,"b":40}`},
		{"create_state", `{"name":"sky","r":40,"g":140,"b":255}`},
		{"set_state", `{"name":"amber"}`},
	} {
		if m, err := nc.Request("lumen.demo.cmd."+req[0], []byte(req[1]), 10*time.Second); err != nil || !bytes.Contains(m.Data, []byte(`"ok":true`)) {
			t.Fatalf("%s %s: %v", req[0], req[1], err)
		}
	}
	near := func(want [3]uint32) func(r, g, b uint32) bool {
		return func(r, g, bl uint32) bool {
			d := func(a, b uint32) bool { return a+3 >= b && b+3 >= a }
			return d(r, want[0]) && d(g, want[1]) && d(bl, want[2])
		}
	}
	sec := `section[data-light="demo"]`
	b.do(t, "load the page", chromedp.Navigate(d.Page(t)), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
	b.waitSwatch(t, "demo", "#ff8c28", near([3]uint32{255, 140, 40}))
	if got := b.text(t, sec+` .rgb`); got != "rgb(255, 140, 40)" {
		t.Errorf("the page says %q", got)
	}
	if _, err := nc.Request("lumen.demo.cmd.set_state", []byte(`{"name":"sky"}`), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	b.waitSwatch(t, "demo", "#288cff", near([3]uint32{40, 140, 255}))
	if got := b.text(t, sec+` .rgb`); got != "rgb(40, 140, 255)" {
		t.Errorf("the page says %q", got)
	}
}

// getLight is the demo light's get over NATS, decoded.
type lightGet struct {
	State      string `json:"state"`
	Brightness int    `json:"brightness"`
	States     []struct {
		Name    string `json:"name"`
		R, G, B any
	} `json:"states"`
	Fade json.RawMessage `json:"fade"`
}

func getLight(t *testing.T, nc *nats.Conn) lightGet {
	t.Helper()
	var g lightGet
	if err := json.Unmarshal([]byte(getJSON(t, nc)), &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// waitLight waits up to 5 s for the light, over NATS, to satisfy ok.
func waitLight(t *testing.T, b *browser, nc *nats.Conn, what string, ok func(lightGet) bool) lightGet {
	t.Helper()
	var g lightGet
	if !lumentest.Within(5*time.Second, func() bool { g = getLight(t, nc); return ok(g) }) {
		b.keepScreenshot(t, what)
		t.Fatalf("%s: the light is %+v", what, g)
	}
	return g
}

// stateColor is the r, g, b of the state name, as numbers.
func (g lightGet) stateColor(name string) [3]float64 {
	for _, s := range g.States {
		if s.Name == name {
			f := func(v any) float64 { x, _ := v.(float64); return x }
			return [3]float64{f(s.R), f(s.G), f(s.B)}
		}
	}
	return [3]float64{-1, -1, -1}
}

// within500 fails unless the JavaScript predicate holds in the page
// within 500 ms: a change made over NATS shows that fast.
func (b *browser) within500(t *testing.T, what, predicate string) {
	t.Helper()
	if !lumentest.Within(500*time.Millisecond, func() bool { return eval[bool](t, b, predicate) }) {
		b.keepScreenshot(t, "late "+what)
		t.Fatalf("500 ms after a change over NATS the page does not show %s (%s)", what, predicate)
	}
}

func request(t *testing.T, nc *nats.Conn, verb, body string) {
	t.Helper()
	m, err := nc.Request("lumen.demo.cmd."+verb, []byte(body), 10*time.Second)
	if err != nil || !bytes.Contains(m.Data, []byte(`"ok":true`)) {
		t.Fatalf("%s %s: %v %s", verb, body, err, m.Data)
	}
}

// Every control of a light changes the light (checked over NATS), has
// the accessible name a person hears, and follows a change made over
// NATS within 500 ms.
func TestPageControls(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	_, nc := openPage(t, b)
	sec := `section[data-light="demo"]`
	q := func(sel string) string { return `document.querySelector('` + sec + ` ` + sel + `')` }
	b.waitPage(t, "the gallery", q(`.gallery button[data-state="red"]`)+` !== null`)

	// The names a screen reader gives.
	ax, err := chromedp.Call(b.ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][]string{} // name → roles
	for _, n := range ax.Nodes {
		if n.Name == nil || n.Role == nil || n.Ignored {
			continue
		}
		var name, role string
		_ = json.Unmarshal(n.Name.Value, &name)
		_ = json.Unmarshal(n.Role.Value, &role)
		names[name] = append(names[name], role)
	}
	for name, role := range map[string]string{"Power": "button", "Brightness": "slider", "Fade": "combobox", "States": "group",
		"Click": "button", "Double click": "button", "Hold": "button", "warm white": "button", "orange": "button", "red": "button"} {
		if !slices.Contains(names[name], role) {
			t.Errorf("no %s named %q (only %q)", role, name, names[name])
		}
	}
	if !slices.Contains(names["Color"], "ColorWell") {
		t.Errorf("no color picker named Color (only %q)", names["Color"])
	}

	// Power on from the keyboard, with its focus shown, and off.
	b.do(t, "power on", chromedp.Focus(chromedp.CSS(sec+` .power`)), chromedp.KeyEvent(" "))
	waitLight(t, b, nc, "power on", func(g lightGet) bool { return g.State != "off" })
	b.waitPage(t, "Power pressed", q(`.power`)+`.getAttribute("aria-pressed") === "true"`)
	if o := eval[string](t, b, `getComputedStyle(document.activeElement).outlineStyle`); o != "solid" {
		t.Errorf("the focused Power button has outline %q", o)
	}
	b.do(t, "power off", chromedp.Click(chromedp.CSS(sec+` .power`)))
	waitLight(t, b, nc, "power off", func(g lightGet) bool { return g.State == "off" })

	// A state from the gallery.
	b.do(t, "tap green", chromedp.Click(chromedp.CSS(sec+` .gallery button[data-state="green"]`)))
	waitLight(t, b, nc, "green", func(g lightGet) bool { return g.State == "green" })
	b.waitPage(t, "green pressed", q(`.gallery button[aria-pressed="true"]`)+`?.dataset.state === "green"`)
	b.waitPage(t, "green's swatch", q(`.gallery button[data-state="green"] circle`)+`.getAttribute("fill") === "rgb(0,255,0)"`)

	// The dimmer, with a fade of 1 s.
	b.do(t, "fade 1 s", chromedp.SetValue(chromedp.CSS(sec+` .fade`), "1000"))
	eval[any](t, b, `(() => { const s = `+q(`.brightness`)+`; s.value = 40; s.dispatchEvent(new Event("input")); s.dispatchEvent(new Event("change")); return null })()`)
	g := waitLight(t, b, nc, "brightness 40", func(g lightGet) bool { return g.Brightness == 40 })
	if !bytes.Contains(g.Fade, []byte("1000")) {
		t.Errorf("the dimmer did not fade over 1 s: fade %s", g.Fade)
	}
	b.do(t, "no fade", chromedp.SetValue(chromedp.CSS(sec+` .fade`), "0"))

	// The color picker, and a preset.
	eval[any](t, b, `(() => { const c = `+q(`.color`)+`; c.value = "#00ff80"; c.dispatchEvent(new Event("change")); return null })()`)
	waitLight(t, b, nc, "#00ff80", func(g lightGet) bool { return g.State == "color" && g.stateColor("color") == [3]float64{0, 255, 128} })
	b.do(t, "orange", chromedp.Click(chromedp.CSS(sec+` .presets button:nth-child(3)`)))
	waitLight(t, b, nc, "orange", func(g lightGet) bool { return g.State == "color" && g.stateColor("color") == [3]float64{255, 165, 0} })
	b.waitPage(t, "the color state in the gallery", q(`.gallery button[data-state="color"]`)+`?.getAttribute("aria-pressed") === "true"`)

	// Changes over NATS show within 500 ms.
	request(t, nc, "set_state", `{"name":"blue"}`)
	b.within500(t, "blue pressed", q(`.gallery button[aria-pressed="true"]`)+`?.dataset.state === "blue"`)
	b.within500(t, "the picker at blue", q(`.color`)+`.value === "#0000ff"`)
	request(t, nc, "set_brightness", `{"percent":30}`)
	b.within500(t, "the slider at 30", q(`.brightness`)+`.value === "30"`)
	request(t, nc, "power", `{"on":false}`)
	b.within500(t, "Power not pressed", q(`.power`)+`.getAttribute("aria-pressed") === "false"`)
	request(t, nc, "create_state", `{"name":"teal","r":0,"g":128,"b":128}`)
	b.within500(t, "the new state", q(`.gallery button[data-state="teal"]`)+` !== null`)

	// The light's button: click, double click, hold.
	request(t, nc, "append_rules", `{"rules":[{"from":"*","on":"button_double_click","to":"teal","priority":10}]}`)
	b.do(t, "click", chromedp.Click(chromedp.CSS(sec+` .press[data-edges=click]`)))
	waitLight(t, b, nc, "click", func(g lightGet) bool { return g.State == "red" })
	b.do(t, "double click", chromedp.Click(chromedp.CSS(sec+` .press[data-edges=double]`)))
	waitLight(t, b, nc, "double click", func(g lightGet) bool { return g.State == "teal" })
	b.do(t, "hold", chromedp.Click(chromedp.CSS(sec+` .press[data-edges=hold]`)))
	waitLight(t, b, nc, "hold", func(g lightGet) bool { return g.State == "off" })

	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) > 0 {
		t.Errorf("the page logged problems:\n%s", strings.Join(b.problems, "\n"))
	}
}

// On a phone the page does not scroll sideways, even with every panel
// open and the model's wide tables in it; screenshots at a phone's and
// a desktop's size are kept as test artifacts.
func TestPageOnAPhone(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	_, nc := openPage(t, b)
	// A long rule, to make the rules table wide.
	request(t, nc, "append_rules", `{"rules":[{"from":"*","on":"button_double_click","to":"blue","condition":"getData('a_rather_long_variable_name_for_a_wide_table') === undefined && getData('another_one') !== 3","priority":10}]}`)
	sec := `section[data-light="demo"]`
	eval[any](t, b, `(() => { for (const d of document.querySelectorAll("details")) d.open = true; return null })()`)
	b.waitPage(t, "the rules table", `document.querySelector('`+sec+` .model-body').textContent.includes("a_rather_long")`)
	checkLayout(t, b, "page", true)

	// The dark theme, for a phone at night.
	dark := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}
	if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, dark); err != nil {
		t.Fatal(err)
	}
	b.do(t, "viewport 390x844", chromedp.EmulateViewport(390, 844), chromedp.Sleep(200*time.Millisecond))
	if bg := eval[string](t, b, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(17, 19, 24)" {
		t.Errorf("in the dark theme the page's background is %s", bg)
	}
	b.keepScreenshot(t, "page dark 390x844")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// checkLayout checks view at 360×740, 390×844 and 1280×900: no sideways
// scroll, every control 44 px high or more, and (wide) a table that is
// wider than its box at 360 px, so that the first check proves
// something; it keeps screenshots at 390×844 and 1280×900.
func checkLayout(t *testing.T, b *browser, view string, wide bool) {
	t.Helper()
	for _, size := range [][2]int64{{360, 740}, {390, 844}, {1280, 900}} {
		what := "viewport " + itoa(size[0]) + "x" + itoa(size[1])
		b.do(t, what, chromedp.EmulateViewport(size[0], size[1]), chromedp.Sleep(200*time.Millisecond))
		if w, iw := eval[float64](t, b, `document.scrollingElement.scrollWidth`), eval[float64](t, b, `innerWidth`); w > iw {
			b.keepScreenshot(t, "wide "+view+" "+what)
			t.Errorf("at %s the %s is %v px wide for %v px", what, view, w, iw)
		}
		// Every control is a touch target of 44 px or more.
		if small := eval[[]string](t, b, `[...document.querySelectorAll("button, select, input, summary")].filter((e) => e.offsetParent && e.getBoundingClientRect().height < 44).map((e) => e.className + ":" + (e.textContent || e.type))`); len(small) > 0 {
			t.Errorf("at %s these are under 44 px high in the %s: %v", what, view, small)
		}
		if wide && size[0] == 360 && !eval[bool](t, b, `[...document.querySelectorAll(".wide")].some((w) => w.scrollWidth > w.clientWidth)`) {
			t.Errorf("at %s no table is wider than its box: the check above proves nothing", what)
		}
		if size[0] != 360 {
			b.keepScreenshot(t, view+" "+what)
		}
	}
}

// checkAxe injects axe-core (src) into the page as it is and fails on
// any serious or critical violation, at a phone's and a desktop's width,
// in the light and the dark theme.
func checkAxe(t *testing.T, b *browser, src string) {
	t.Helper()
	// DevTools' evaluation is not the page's script: its CSP does not
	// apply.
	b.do(t, "inject axe-core", chromedp.Evaluate[chromedp.Void](src+"\n;null"))
	run := `axe.run(document, {resultTypes: ["violations"]}).then((r) => r.violations
		.filter((v) => v.impact === "serious" || v.impact === "critical")
		.map((v) => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length,
			targets: v.nodes.slice(0, 3).map((n) => n.target.join(" ")),
			summary: (v.nodes[0] && v.nodes[0].failureSummary || "").replace(/\s+/g, " ")})))`
	for _, scheme := range []string{"light", "dark"} {
		media := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, media); err != nil {
			t.Fatal(err)
		}
		for _, size := range [][2]int64{{390, 844}, {1280, 900}} {
			what := scheme + " " + itoa(size[0]) + "x" + itoa(size[1])
			b.do(t, what, chromedp.EmulateViewport(size[0], size[1]), chromedp.Sleep(200*time.Millisecond))
			ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
			found, err := chromedp.Run(ctx, chromedp.Evaluate[[]axeViolation](run, chromedp.EvalAwaitPromise))
			cancel()
			if err != nil {
				t.Fatalf("%s: axe.run: %v", what, err)
			}
			if len(found) > 0 {
				b.keepScreenshot(t, "axe "+what)
			}
			for _, v := range found {
				t.Errorf("%s: %s (%s) on %d elements: %s; %s; %s", what, v.ID, v.Impact, v.Nodes, v.Help, strings.Join(v.Targets, ", "), v.Summary)
			}
		}
	}
}

// axeScript is axe-core's axe.min.js (pinned, installed from npm by the
// Taskfile's axe task); the suite needs it, so a machine without it
// fails here rather than skip.
func axeScript(t *testing.T) string {
	t.Helper()
	name := os.Getenv("LUMEN_AXE")
	if name == "" {
		out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			t.Fatalf("no LUMEN_AXE and no repository to find .cache/axe in: %v", err)
		}
		name = filepath.Join(strings.TrimSpace(string(out)), ".cache", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("no axe-core (%v): install it with the Taskfile's axe task (go run github.com/go-task/task/v3/cmd/task@v3.45.4 axe), or set LUMEN_AXE to an axe.min.js", err)
	}
	return string(src)
}

// axeViolation is what the test reports of one of axe's violations.
type axeViolation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Nodes   int      `json:"nodes"`
	Targets []string `json:"targets"`
	Summary string   `json:"summary"`
}

// axe-core finds no serious or critical violation in the page, with
// every panel open, at a phone's and a desktop's width, in the light
// and the dark theme.
func TestPageAccessible(t *testing.T) {
	t.Parallel()
	src := axeScript(t)
	b := newBrowser(t)
	_, nc := openPage(t, b)
	sec := `section[data-light="demo"]`
	// Something in the log.
	b.do(t, "press the button", chromedp.Click(chromedp.CSS(sec+` .press[data-edges=click]`)))
	waitState(t, b, nc, "demo", "red")
	eval[any](t, b, `(() => { for (const d of document.querySelectorAll("details")) d.open = true; return null })()`)
	b.waitPage(t, "the panels to fill", `document.querySelector('`+sec+` .model-body table') !== null && document.querySelector('`+sec+` .yaml').value.includes("states:") && document.querySelector('`+sec+` .gallery button') !== null && document.querySelector("#log li") !== null`)
	// A mistake in the editor, for the error's colors.
	setEditor(t, b, sec, "states:\n  - name: teal\n    r: [0, 128\n")
	b.do(t, "check", chromedp.Click(chromedp.CSS(sec+` .check`)))
	b.waitPage(t, "the error", `document.querySelector('`+sec+` .msg').classList.contains("error")`)
	checkAxe(t, b, src)
}

// Hold lasts as long as the light's hold takes: a button set to 2 s
// (hardware.gestures.hold_ms) still sees a hold, not a click.
func TestPageHoldFollowsTheButton(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "lumen.yaml")
	if err := os.WriteFile(conf, []byte("hardware: {gestures: {hold_ms: 2000}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	_, nc := openPage(t, b, "--config", conf)
	sec := `section[data-light="demo"]`
	request(t, nc, "set_state", `{"name":"green"}`)
	b.do(t, "hold", chromedp.Click(chromedp.CSS(sec+` .press[data-edges=hold]`)))
	waitLight(t, b, nc, "hold", func(g lightGet) bool { return g.State == "off" })
}
