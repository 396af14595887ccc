package main_test

import (
	"strings"
	"testing"
)

// What a light shows when the daemon starts after a power cut (SIGKILL)
// is its power_on: restore keeps the state it was in, off and "state
// NAME" move it there, journaled by power_on; after a clean stop
// (SIGTERM) nothing moves.
func TestPowerOnAfterAnUncleanStop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		powerOn, kill, want string
	}{
		{"", "kill", "red"},
		{"off", "kill", "off"},
		{"state blue", "kill", "blue"},
		{"off", "stop", "red"},
	} {
		t.Run(strings.ReplaceAll(tc.powerOn+" "+tc.kill, " ", "_"), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			d := startDaemon(t, dir)
			nc := connect(t, d.URL)
			cfg := `{"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],"rules":[],"state":"red"`
			if tc.powerOn != "" {
				cfg += `,"power_on":"` + tc.powerOn + `"`
			}
			mustOK(t, request(t, nc, "lumen.demo.cmd.apply", cfg+`}`))
			if tc.kill == "kill" {
				d.Kill()
			} else if err := d.Stop(); err != nil {
				t.Fatal(err)
			}
			nc.Close()

			d = startDaemon(t, dir)
			if out, _ := runCLI(t, d.URL, "state"); strings.TrimSpace(out) != tc.want {
				t.Fatalf("after %s with power_on %q: state %q, want %s\n%s", tc.kill, tc.powerOn, out, tc.want, d.Logs())
			}
			out, code := runCLI(t, d.URL, "why")
			switch {
			case tc.want != "red" && (code != 0 || !strings.Contains(out, "by power_on")):
				t.Errorf("why after power_on moved it: exit %d\n%s", code, out)
			case tc.want == "red" && strings.Contains(out, "power_on"):
				t.Errorf("why when nothing moved: %s", out)
			}
		})
	}
}
