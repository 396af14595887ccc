package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/lumen-home/lumen/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "unit.service")
	if err := atomicfile.WriteBytes(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.WriteBytes(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if err != nil || string(b) != "two" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%q %v %v", b, fi.Mode(), err)
	}
	// A failed write leaves the old file and no temporary one.
	boom := errors.New("boom")
	err = atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, _ = w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Fatalf("the old file changed: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	for name, want := range map[string]bool{".unit.service.tmp-123": true, "unit.service": false, ".hidden": false} {
		if atomicfile.IsTemp(name) != want {
			t.Errorf("IsTemp(%q) != %v", name, want)
		}
	}
}
