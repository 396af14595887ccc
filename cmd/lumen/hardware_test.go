package main_test

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	// The demo light has no double-click rule: a double press is two
	// clicks, each decided on its release.
	out, code = runCLI(t, d.URL, "press", "double")
	if code != 0 || strings.Count(out, "fired    button_click from button") != 2 || !strings.Contains(out, "as two clicks") || !strings.Contains(out, "→ green") {
		t.Fatalf("lumen press double, no double-click rule (%d):\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "rule", "add", "*", "button_double_click", "off"); code != 0 {
		t.Fatalf("lumen rule add (%d):\n%s", code, out)
	}
	out, code = runCLI(t, d.URL, "press", "double")
	if code != 0 || !strings.Contains(out, "fired    button_double_click from button") || strings.Contains(out, "fired    button_click") || !strings.Contains(out, "→ off") {
		t.Fatalf("lumen press double, with a double-click rule (%d):\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "press", "triple"); code != 2 || !strings.Contains(out, "click, double or hold") {
		t.Fatalf("lumen press triple (%d):\n%s", code, out)
	}
}

func TestPreviewCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--hardware", "sim")
	// A state of the light, by name: static, so every frame is the same.
	// Not a terminal: the numbers, no color escapes.
	out, code := runCLI(t, d.URL, "preview", "red", "--frames", "3")
	if code != 0 || strings.Count(out, "255   0   0") != 3 || strings.Contains(out, "\x1b[") {
		t.Fatalf("lumen preview red (%d):\n%q", code, out)
	}
	// A broken expression: the frames in the error color, and exit 1.
	out, code = runCLI(t, d.URL, "preview", `{"name":"bad","r":"nope.x","g":0,"b":0}`, "--frames", "2")
	if code != 1 || !strings.Contains(out, "the light shows its error color") || strings.Count(out, "255   0 128") != 2 {
		t.Fatalf("lumen preview of a broken state (%d):\n%s", code, out)
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
