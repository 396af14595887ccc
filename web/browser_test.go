package web_test

import (
	"bytes"
	"context"
	"image"
	_ "image/png" // screenshots
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

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

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.WindowSize(800, 1000),
	)
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

// text is the text of the element sel.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.keepScreenshot(t, "text")
		t.Fatalf("the text of %s: %v", sel, err)
	}
	return s
}

func (b *browser) keepScreenshot(t *testing.T, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
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
	deadline := time.Now().Add(time.Second)
	for {
		r, g, bl := b.swatchColor(t, light)
		if ok(r, g, bl) {
			return
		}
		if time.Now().After(deadline) {
			b.keepScreenshot(t, "swatch not "+want)
			t.Fatalf("the swatch of %s is rgb(%d,%d,%d), want %s", light, r, g, bl, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestPageInChromium(t *testing.T) {
	t.Parallel()
	d := lumentest.Start(t, t.TempDir(), "--http", "127.0.0.1:0", "--hardware", "sim")
	page := pageURL(t, d)
	nc, err := nats.Connect(d.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	b := newBrowser(t)

	// It loads, live, with no console error and no request elsewhere.
	b.do(t, "load the page", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`section[data-light="demo"] .press`)),
		chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))

	// The virtual button: a click turns the light red, on the LED and
	// in the swatch.
	b.do(t, "press the button", chromedp.Click(chromedp.CSS(`section[data-light="demo"] .press`)))
	waitState(t, b, nc, "demo", "red")
	b.waitSwatch(t, "demo", "red", func(r, g, bl uint32) bool { return r >= 128 && g <= 60 && bl <= 60 })

	// A click from elsewhere shows in the swatch and the log within 500 ms.
	if _, err := nc.Request("lumen.demo.cmd.fire", []byte(`{"transition":"button_click"}`), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	fired := time.Now()
	for {
		state, logText := b.text(t, `section[data-light="demo"] .state`), b.text(t, `#log`)
		if state == "green" && strings.Contains(logText, "out.state") {
			break
		}
		if time.Since(fired) > 500*time.Millisecond {
			b.keepScreenshot(t, "late")
			t.Fatalf("500 ms after a fire from NATS the page shows %q; log:\n%s", state, logText)
		}
		time.Sleep(20 * time.Millisecond)
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

// pageURL is the page's address from the daemon's line after ready.
func pageURL(t *testing.T, d *lumentest.Daemon) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, line := range strings.Split(d.Logs(), "\n") {
			if u, ok := strings.CutPrefix(line, "lumen: page "); ok {
				return strings.TrimSpace(u)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no page line:\n%s", d.Logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitState waits until light is in state over NATS.
func waitState(t *testing.T, b *browser, nc *nats.Conn, light, state string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := nc.Request("lumen."+light+".cmd.get", []byte(`{}`), 5*time.Second)
		if err == nil && bytes.Contains(m.Data, []byte(`"state":"`+state+`"`)) {
			return
		}
		if time.Now().After(deadline) {
			b.keepScreenshot(t, "state "+state)
			t.Fatalf("%s never became %s", light, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
