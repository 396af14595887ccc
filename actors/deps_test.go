package actors_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The pure packages must stay pure: no network, no bus, no actors, no
// hardware, no Wasmtime. They are reused by replay, which has none of those.
func TestPurePackagesImportNoIO(t *testing.T) {
	forbidden := []string{
		"net", "net/http", "os/exec",
		"github.com/nats-io/", "github.com/asynkron/protoactor-go",
		"github.com/stianeikeland/go-rpio", "github.com/bytecodealliance/wasmtime-go",
	}
	for _, pkg := range []string{"github.com/lumen-home/lumen/messages", "github.com/lumen-home/lumen/actors/light/machine"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) || strings.HasPrefix(dep, f+"/") && !strings.HasPrefix(f, "net") {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}
