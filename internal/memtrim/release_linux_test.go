package memtrim

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFile is the resident memory of this process's file mappings, kB.
func rssFile(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
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
