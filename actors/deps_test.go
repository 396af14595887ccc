package actors_test

import (
	"os"
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
	pure := []string{"messages", "actors/light/machine",
		"hardware", "hardware/gesture", "hardware/input", "hardware/render", "hardware/ws2812", "hardware/sim", "hardware/hwtest", "internal/jsbox", "actors/source/datasource"}
	// Also as built for the Pi, where the GPIO driver's files compile.
	for _, goarch := range []string{"", "arm64"} {
		for _, pkg := range pure {
			pkg = "github.com/lumen-home/lumen/" + pkg
			cmd := exec.Command("go", "list", "-deps", pkg)
			if goarch != "" {
				cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list %s: %v\n%s", pkg, err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, f := range forbidden {
					if dep == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) || strings.HasPrefix(dep, f+"/") && !strings.HasPrefix(f, "net") {
						t.Errorf("%s (GOARCH %q) imports %s", pkg, goarch, dep)
					}
				}
			}
		}
	}
}
