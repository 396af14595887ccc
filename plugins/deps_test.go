package plugins_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The JavaScript engine lives only inside the wasm guest: no host package
// under plugins/ imports goja, nor the guest.
func TestHostImportsNoJavaScriptEngine(t *testing.T) {
	const guest = "github.com/lumen-home/lumen/plugins/guest"
	out, err := exec.Command("go", "list", "-e", "github.com/lumen-home/lumen/plugins/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var host []string
	for _, pkg := range strings.Fields(string(out)) {
		if pkg != guest {
			host = append(host, pkg)
		}
	}
	for _, pkg := range host {
		out, err := exec.Command("go", "list", "-e", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/dop251/goja") || dep == guest {
				t.Errorf("%s imports %s", pkg, dep)
			}
		}
	}
}
