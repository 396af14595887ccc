package mic_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/lumen-home/lumen/agent/mic"
)

// arecord runs in a process group of its own, which the terminal's
// Ctrl-C (sent to lumen's group) does not reach: lumen alone decides that
// a recording is cancelled (cmd/lumen's TestTalkMicrophoneCtrlC shows it
// end to end).
func TestRecordOwnProcessGroup(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "pgrp")
	// Field 5 of /proc/PID/stat is the process group.
	bin := fakeArecord(t, `read -r _ _ _ _ pgrp _ < /proc/$$/stat; echo "$pgrp" > '`+out+`'`)
	if _, err := (mic.Recorder{Bin: bin}).Record(context.Background()); err == nil {
		t.Fatal("a device that stopped at once gave a recording")
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if pgrp, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || pgrp == syscall.Getpgrp() {
		t.Fatalf("arecord's process group %q, lumen's %d", b, syscall.Getpgrp())
	}
}
