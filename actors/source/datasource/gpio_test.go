package datasource_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

func gpioDef(t *testing.T, js string) datasource.Def {
	t.Helper()
	d, err := datasource.Decode([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestGPIODefaults(t *testing.T) {
	for _, tc := range []struct {
		given    string
		pull     string
		debounce time.Duration
		canon    string
	}{
		{`{"name":"pir","type":"gpio","pin":23,"fires":"motion"}`, "none", 20 * time.Millisecond,
			`{"name":"pir","type":"gpio","fires":"motion","pin":23,"pull":"none","edge":"rising","debounce_ms":20}`},
		{`{"name":"pir","type":"gpio","pin":23,"pull":"off","debounce_ms":0,"fires":"motion"}`, "none", 0,
			`{"name":"pir","type":"gpio","fires":"motion","pin":23,"pull":"none","edge":"rising","debounce_ms":0}`},
		{`{"name":"reed","type":"gpio","pin":24,"pull":"up","edge":"falling","debounce_ms":50,"fires":"door"}`, "up", 50 * time.Millisecond,
			`{"name":"reed","type":"gpio","fires":"door","pin":24,"pull":"up","edge":"falling","debounce_ms":50}`},
	} {
		d := gpioDef(t, tc.given)
		if d.Pull != tc.pull || d.Debounce() != tc.debounce {
			t.Errorf("%s: pull %q debounce %v", tc.given, d.Pull, d.Debounce())
		}
		// The canonical form is what the journal keeps: reading it again
		// must give the same definition (debounce 0 included).
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.canon {
			t.Errorf("canonical %s, want %s", b, tc.canon)
		}
		again := gpioDef(t, string(b))
		if again.Debounce() != d.Debounce() || again.Pull != d.Pull {
			t.Errorf("%s does not read back the same", b)
		}
	}
}

func TestGPIOMatch(t *testing.T) {
	rising := gpioDef(t, `{"name":"pir","type":"gpio","pin":23,"fires":"motion"}`)
	falling := gpioDef(t, `{"name":"pir","type":"gpio","pin":23,"edge":"falling","fires":"motion"}`)
	both := gpioDef(t, `{"name":"pir","type":"gpio","pin":23,"edge":"both","fires":"motion"}`)
	nats := gpioDef(t, `{"name":"d","type":"nats","subject":"home.x","fires":"x"}`)
	up := `{"pin":23,"level":1,"edge":"rising","at":"2026-11-22T08:00:00Z"}`
	down := `{"pin":23,"level":0,"edge":"falling","at":"2026-11-22T08:00:00Z"}`
	for _, tc := range []struct {
		name    string
		def     datasource.Def
		payload string
		want    bool
	}{
		{"rising wants high", rising, up, true},
		{"rising ignores low", rising, down, false},
		{"falling wants low", falling, down, true},
		{"falling ignores high", falling, up, false},
		{"both wants high", both, up, true},
		{"both wants low", both, down, true},
		{"another pin", rising, `{"pin":24,"level":1}`, false},
		{"bad level", both, `{"pin":23,"level":7}`, false},
		{"not JSON", both, `level 1`, false},
		{"not a gpio source", nats, up, false},
	} {
		if got := datasource.GPIOMatch(tc.def, []byte(tc.payload)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestGPIOConflict(t *testing.T) {
	reserved := map[int]string{4: "the button (hardware.rpi.button.pin)", 17: "the LED's red channel"}
	pir := gpioDef(t, `{"name":"pir","type":"gpio","pin":23,"pull":"down","fires":"motion"}`)
	others := []datasource.Def{pir, gpioDef(t, `{"name":"d","type":"nats","subject":"home.x","fires":"x"}`)}
	for _, tc := range []struct {
		name, def string
		want      string // "" = no conflict
	}{
		{"free pin", `{"name":"reed","type":"gpio","pin":24,"fires":"door"}`, ""},
		{"the button's pin", `{"name":"b","type":"gpio","pin":4,"fires":"x"}`, "BCM 4 is the button"},
		{"the LED's pin", `{"name":"b","type":"gpio","pin":17,"fires":"x"}`, "BCM 17 is the LED's red channel"},
		{"same pin, same settings, other edge", `{"name":"gone","type":"gpio","pin":23,"pull":"down","edge":"falling","fires":"x"}`, ""},
		{"same pin, other pull", `{"name":"b","type":"gpio","pin":23,"pull":"up","fires":"x"}`, `already watched by source "pir" with pull down`},
		{"same pin, other debounce", `{"name":"b","type":"gpio","pin":23,"pull":"down","debounce_ms":0,"fires":"x"}`, "debounce_ms 20"},
		{"redefining itself", `{"name":"pir","type":"gpio","pin":23,"pull":"up","fires":"x"}`, ""},
		{"not gpio", `{"name":"n","type":"nats","subject":"home.y","fires":"x"}`, ""},
	} {
		err := datasource.GPIOConflict(gpioDef(t, tc.def), reserved, others)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, &datasource.Error{Code: datasource.CodeConflict})):
			t.Errorf("%s: %v, want a 409 with %q", tc.name, err, tc.want)
		}
	}
}
