package memtrim

import (
	"os"
	"testing"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// rssFile is the resident memory of this process's file mappings, kB.
func rssFile(t *testing.T) int64 {
	t.Helper()
	kb, err := lumentest.ProcStatusKB(os.Getpid(), "RssFile")
	if err != nil {
		t.Fatal(err)
	}
	return kb["RssFile"]
}

// TestRelease gives back this test binary's own code, and goes on
// running it.
func TestRelease(t *testing.T) {
	before := rssFile(t)
	released, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFile(t)
	if released <= 0 {
		t.Fatalf("released %d bytes of the binary (RssFile %d kB before)", released, before)
	}
	if after >= before {
		t.Errorf("RssFile %d kB after releasing %d kB, %d kB before", after, released>>10, before)
	}
	t.Logf("RssFile %d kB → %d kB (%d kB of the binary released)", before, after, released>>10)
	// The code released runs again.
	if _, err := Release(); err != nil {
		t.Fatal(err)
	}
}
