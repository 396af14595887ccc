package main_test

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// led asks a light's device what it shows.
func led(t *testing.T, nc *nats.Conn, light string) (state string, pixels, raw [][3]int) {
	t.Helper()
	r := mustOK(t, request(t, nc, "lumen."+light+".cmd.led", `{}`))
	var body struct {
		State  string `json:"state"`
		Pixels []struct{ R, G, B int }
		Raw    []struct{ R, G, B int }
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	for _, p := range body.Pixels {
		pixels = append(pixels, [3]int{p.R, p.G, p.B})
	}
	for _, p := range body.Raw {
		raw = append(raw, [3]int{p.R, p.G, p.B})
	}
	return body.State, pixels, raw
}

// waitLED polls cmd.led until the device shows state.
func waitLED(t *testing.T, nc *nats.Conn, light, state string) (pixels, raw [][3]int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, p, r := led(t, nc, light)
		if s == state {
			return p, r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the LED of %s shows %q, want %q", light, s, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func edge(t *testing.T, nc *nats.Conn, light, e string) {
	t.Helper()
	mustOK(t, request(t, nc, "lumen."+light+".cmd.button", `{"edge":"`+e+`"}`))
}

// Raw edges over NATS go through debounce and gesture detection, become
// fired inputs, the rules react, and the LED shows the new state.
func TestSimulatedButtonAndLED(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--hardware", "sim")
	nc := connect(t, d.URL)
	events := subscribeEvents(t, nc, "demo")

	if p, raw := waitLED(t, nc, "demo", "off"); p[0] != [3]int{0, 0, 0} || raw[0] != [3]int{0, 0, 0} {
		t.Fatalf("off shows %v (raw %v)", p, raw)
	}
	// A click with contact bounce on the way down.
	edge(t, nc, "demo", "down")
	edge(t, nc, "demo", "up")
	edge(t, nc, "demo", "down")
	time.Sleep(60 * time.Millisecond)
	edge(t, nc, "demo", "up")
	in := waitEvent(t, events, "lumen.demo.evt.in.fired", `"button_click"`)
	if !strings.Contains(string(in.Data), `"source":"button"`) {
		t.Fatalf("gesture input does not say it came from the button: %s", in.Data)
	}
	waitEvent(t, events, "lumen.demo.evt.out.state", `"to":"red"`)
	if p, raw := waitLED(t, nc, "demo", "red"); raw[0] != [3]int{255, 0, 0} || p[0][0] == 0 || p[0][1] != 0 {
		t.Fatalf("red shows %v (raw %v)", p, raw)
	}

	// A hold turns it off (the demo's wildcard rule), then a release.
	edge(t, nc, "demo", "down")
	waitEvent(t, events, "lumen.demo.evt.in.fired", `"button_hold"`)
	edge(t, nc, "demo", "up")
	waitEvent(t, events, "lumen.demo.evt.in.fired", `"button_release"`)
	waitLED(t, nc, "demo", "off")

	// Two quick clicks are one double click, never two clicks.
	for range 2 {
		edge(t, nc, "demo", "down")
		time.Sleep(40 * time.Millisecond)
		edge(t, nc, "demo", "up")
		time.Sleep(60 * time.Millisecond)
	}
	waitEvent(t, events, "lumen.demo.evt.in.fired", `"button_double_click"`)
	time.Sleep(500 * time.Millisecond)
	for {
		select {
		case m := <-events:
			if strings.Contains(string(m.Data), `"button_click"`) {
				t.Fatalf("a double click also fired a click: %s", m.Data)
			}
			continue
		default:
		}
		break
	}

	// Bad edges get clear errors.
	if r := request(t, nc, "lumen.demo.cmd.button", `{"edge":"sideways"}`); r.Code != "400" || !strings.Contains(r.Body["error"].(string), "down") {
		t.Fatalf("bad edge: %s", r.Raw)
	}
	if r := request(t, nc, "lumen.demo.cmd.button", `{"edge":"up"}`); r.Code != "409" {
		t.Fatalf("up while up: %s", r.Raw)
	}
}

// A state whose color expression fails shows the error color and
// journals one error, not one per frame.
func TestRenderErrorIsJournaledOnce(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--hardware", "sim")
	nc := connect(t, d.URL)
	events := subscribeEvents(t, nc, "demo")
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"broken","r":"undefinedThing * 2","g":0,"b":0,"speed":20}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"broken"}`))
	waitEvent(t, events, "lumen.demo.evt.out.error", `"kind":"render"`)
	time.Sleep(300 * time.Millisecond) // 15 frames
	for {
		select {
		case m := <-events:
			if strings.Contains(string(m.Data), `"kind":"render"`) {
				t.Fatalf("a second render error for the same state: %s", m.Data)
			}
			continue
		default:
		}
		break
	}
	if _, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify"); code != 0 {
		t.Fatal("replay --verify fails once a render error is journaled")
	}
}

func TestPressCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--hardware", "sim")
	out, code := runCLI(t, d.URL, "press")
	if code != 0 || !strings.Contains(out, "button_click") || !strings.Contains(out, "→ red") {
		t.Fatalf("lumen press (%d):\n%s", code, out)
	}
	out, code = runCLI(t, d.URL, "press", "hold", "--for", "900ms")
	if code != 0 || !strings.Contains(out, "button_hold") || !strings.Contains(out, "button_release") || !strings.Contains(out, "→ off") {
		t.Fatalf("lumen press hold (%d):\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "press", "triple"); code != 2 || !strings.Contains(out, "click, double or hold") {
		t.Fatalf("lumen press triple (%d):\n%s", code, out)
	}
}

func TestPreviewCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--hardware", "sim")
	// A state of the light, by name: static, so every frame is the same.
	out, code := runCLI(t, d.URL, "preview", "red", "--frames", "3")
	if code != 0 || strings.Count(out, "\x1b[48;2;255;0;0m") != 3 || !strings.Contains(out, "255   0   0") {
		t.Fatalf("lumen preview red (%d):\n%q", code, out)
	}
	// Nothing was applied.
	if s, _, _ := led(t, connect(t, d.URL), "demo"); s != "off" {
		t.Fatalf("preview changed the light: it shows %s", s)
	}
	// An animation as JSON, to a PNG strip: frames × pixels cells.
	file := filepath.Join(t.TempDir(), "strip.png")
	out, code = runCLI(t, d.URL, "preview", `{"name":"wave","r":"i*50","g":"frame*20","b":0,"speed":40}`,
		"--frames", "5", "--pixels", "4", "--cell", "2", "--png", file)
	if code != 0 || !strings.Contains(out, "5 frames × 4 pixels") {
		t.Fatalf("lumen preview --png (%d): %s", code, out)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 8 || b.Dy() != 10 {
		t.Fatalf("PNG is %v, want 8×10 (4 pixels × 5 frames, cells of 2)", b)
	}
	if r, g, _, _ := img.At(7, 9).RGBA(); r>>8 != 150 || g>>8 != 80 {
		t.Fatalf("last cell = r %d g %d, want pixel 3 of frame 4: r 150 g 80", r>>8, g>>8)
	}
	// Unknown state and bad JSON get clear errors.
	if out, code := runCLI(t, d.URL, "preview", "nope"); code != 1 || !strings.Contains(out, "has no state") || !strings.Contains(out, "red") {
		t.Fatalf("unknown state (%d): %s", code, out)
	}
	if out, code := runCLI(t, d.URL, "preview", `{"name":"x","r":1,"g":2,"b":3,"bogus":1}`); code != 2 || !strings.Contains(out, "bogus") {
		t.Fatalf("bad JSON (%d): %s", code, out)
	}
}
