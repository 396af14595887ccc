package main_test

import (
	"fmt"
	"strings"
	"testing"
)

// Once define_function is answered, a state that calls it is shown with
// it: the LED the led verb reports right after set_state has the color
// the newest function gives. (Not yet in actors/daemon: in process, with
// --sync batch, the LED shows an older function's color now and then.)
func TestFunctionReadsItsWrites(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"fn","r":"level()","g":0,"b":0}`))
	stale := 0
	for i := range 30 {
		mustOK(t, request(t, nc, "lumen.demo.cmd.define_function", fmt.Sprintf(`{"name":"level","code":"return %d;"}`, 10+i)))
		mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"off"}`))
		mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"fn"}`))
		r := mustOK(t, request(t, nc, "lumen.demo.cmd.led", `{}`))
		if !strings.Contains(string(r.Raw), `"state":"fn"`) || !strings.Contains(string(r.Raw), fmt.Sprintf(`"r":%d,`, 10+i)) {
			stale++
			t.Errorf("led right after define_function %d and set_state: %s", 10+i, r.Raw)
		}
	}
	if stale > 0 {
		t.Fatalf("%d of 30 reads of the LED were stale", stale)
	}
}
