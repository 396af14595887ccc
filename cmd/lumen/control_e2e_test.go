package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Everyday control as a person types it, over HTTP, and for the whole
// fleet: lumen color, brightness (a negative step is no flag), off and
// on, toggle; every light answers a fleet command once; bad input is a
// usage error or the light's 400.
func TestEverydayControlCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--light", "kitchen", "--light", "hall", "--http", "127.0.0.1:0")
	nc := connect(t, d.URL)
	model := func(light string) map[string]any {
		t.Helper()
		return mustOK(t, request(t, nc, "lumen."+light+".cmd.get", `{}`)).Body
	}
	for _, tc := range []struct {
		args []string
		want string // a line of the output
	}{
		{[]string{"color", "orange"}, `state +off → color +\[set\] color orange \(#ffa500\), created`},
		{[]string{"color", "warm", "white"}, `\[set\] color warm white \(#ffa757\) `},
		{[]string{"color", "255", "0", "10"}, `\[set\] color #ff000a `},
		{[]string{"color", "2700K"}, `\[set\] color 2700K \(#ffa757\) `},
		{[]string{"color", "#123456"}, `\[set\] color #123456 `},
		{[]string{"brightness", "40"}, `brightness 100% → 40%`},
		{[]string{"brightness", "-10"}, `brightness 40% → 30%`},
		{[]string{"brightness", "+5%"}, `brightness 30% → 35%`},
		{[]string{"brightness"}, `^35%$`},
		{[]string{"off"}, `state +color → off`},
		{[]string{"off"}, `ignored the light is already off`},
		{[]string{"on"}, `state +off → color`},
		{[]string{"toggle"}, `state +color → off`},
	} {
		out, code := runCLI(t, d.URL, append(tc.args, "--light", "kitchen")...)
		if code != 0 || !regexp.MustCompile(`(?m)`+tc.want).MatchString(out) {
			t.Errorf("lumen %s: exit %d\n%s\nwant a line matching %s", strings.Join(tc.args, " "), code, out, tc.want)
		}
	}
	if g := model("kitchen"); g["brightness"] != 35.0 || g["state"] != "off" || g["last_on"] != "color" {
		t.Errorf("kitchen's model: brightness %v, state %v, last_on %v", g["brightness"], g["state"], g["last_on"])
	}

	// The fleet: each light answers once.
	out, code := runCLI(t, d.URL, "color", "blue", "--light", "fleet")
	if code != 0 || !regexp.MustCompile(`(?m)^hall +state +off → color`).MatchString(out) || !regexp.MustCompile(`(?m)^kitchen +state +off → color`).MatchString(out) {
		t.Errorf("lumen color blue --light fleet: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, d.URL, "off", "--light", "fleet")
	if code != 0 || strings.Count(out, "→ off") != 2 {
		t.Errorf("lumen off --light fleet: exit %d\n%s", code, out)
	}
	for _, l := range []string{"kitchen", "hall"} {
		if g := model(l); g["state"] != "off" {
			t.Errorf("%s after lumen off --light fleet: %v", l, g["state"])
		}
	}
	replies := 0
	sub, err := nc.SubscribeSync(nc.NewRespInbox())
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("lumen.fleet.cmd.set_brightness", sub.Subject, []byte(`{"percent":70}`)); err != nil {
		t.Fatal(err)
	}
	for replies < 2 {
		m, err := sub.NextMsg(10e9)
		if err != nil {
			t.Fatalf("a fleet set_brightness: %d replies, want 2: %v", replies, err)
		}
		if !strings.Contains(string(m.Data), `"ok":true`) {
			t.Errorf("a fleet set_brightness reply: %s", m.Data)
		}
		replies++
	}

	// HTTP: the same verbs.
	api := d.Page(t) + "api/v1/lights/hall/"
	post := func(verb, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(api+verb, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, b := post("set_color", `{"kelvin":6500}`); code != http.StatusOK || !strings.Contains(b, `"state":"color"`) {
		t.Errorf("POST set_color: %d %s", code, b)
	}
	if code, b := post("power", `{"on":false}`); code != http.StatusOK || !strings.Contains(b, `"changed":true`) {
		t.Errorf("POST power: %d %s", code, b)
	}
	if code, b := post("toggle", `{}`); code != http.StatusOK || !strings.Contains(b, `"state":"color"`) {
		t.Errorf("POST toggle: %d %s", code, b)
	}
	code, b := post("set_brightness", `{"percent":0}`)
	var e struct{ Error string }
	if code != http.StatusBadRequest || json.Unmarshal([]byte(b), &e) != nil || !strings.Contains(e.Error, `"percent" 0 is off`) {
		t.Errorf("POST set_brightness 0: %d %s", code, b)
	}
	if g := model("hall"); g["brightness"] != 70.0 || g["state"] != "color" {
		t.Errorf("hall's model: %v %v", g["brightness"], g["state"])
	}

	// Bad input from the CLI.
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"color", "ornage"}, 2, "did you mean orange"},
		{[]string{"color", "900K"}, 2, "kelvin 900 is out of range"},
		{[]string{"brightness", "x"}, 2, `brightness "x" is not a number`},
		{[]string{"brightness", "0"}, 1, `"percent" 0 is off`},
		{[]string{"brightness", "101"}, 1, `"percent" 101 is out of range`},
	} {
		out, code := runCLI(t, d.URL, append(tc.args, "--light", "hall")...)
		if code != tc.code || !strings.Contains(out, tc.says) {
			t.Errorf("lumen %s: exit %d\n%s\nwant exit %d saying %s", strings.Join(tc.args, " "), code, out, tc.code, tc.says)
		}
	}
}

// A short fade in real time, from the CLI: the LED's frames between the
// two colors, at most 30 a second, then the target.
func TestShortFadeRealTime(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.apply", `{"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],"rules":[],"state":"blue"}`))
	frames, err := nc.SubscribeSync("lumen.demo.led.frame")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "state", "red", "--fade", "1s"); code != 0 || !strings.Contains(out, `"fade_ms":1000`) && !strings.Contains(out, "blue → red") {
		t.Fatalf("lumen state red --fade 1s: exit %d\n%s", code, out)
	}
	var between int
	var times []time.Time
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		m, err := frames.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		var ev struct {
			Time   time.Time `json:"time"`
			Pixels []struct{ R, G, B int }
		}
		if json.Unmarshal(m.Data, &ev) != nil || len(ev.Pixels) == 0 {
			continue
		}
		times = append(times, ev.Time)
		p := ev.Pixels[0]
		if p.R > 0 && p.B > 0 {
			between++
		}
		if p.R == 255 && p.B == 0 {
			break
		}
	}
	if between < 5 {
		t.Errorf("%d frames between blue and red in a 1 s fade, want at least 5", between)
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < 30*time.Millisecond {
			t.Errorf("frames %v apart: more than 30 a second", gap)
			break
		}
	}
	var led struct{ Pixels []struct{ R, G, B int } }
	if err := json.Unmarshal(mustOK(t, request(t, nc, "lumen.demo.cmd.led", `{}`)).Raw, &led); err != nil || len(led.Pixels) == 0 || led.Pixels[0].R != 255 || led.Pixels[0].B != 0 {
		t.Errorf("after the fade the LED shows %+v, want red", led.Pixels)
	}
}
