//go:build unix

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent/mic/mictest"
	"github.com/lumen-home/lumen/internal/lumentest"
)

// Ctrl-C while speaking cancels: nothing is sent. The terminal signals
// lumen's whole process group; arecord (a stand-in here that plays speech,
// then waits, and notes a SIGINT) is in a group of its own, or its exit
// could end the recording as if the speech were over. Whether lumen or
// arecord would act first is a race, so the note catches a regression
// only most of the time; agent/mic's TestRecordOwnProcessGroup always.
func TestTalkMicrophoneCtrlC(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	speech, ready, hit := filepath.Join(dir, "speech.raw"), filepath.Join(dir, "ready"), filepath.Join(dir, "interrupted")
	if err := os.WriteFile(speech, mictest.Speech(t, "make it blue"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ntrap \"echo > '" + hit + "'; exit 1\" INT\ncat '" + speech + "'\ntouch '" + ready + "'\nwhile :; do sleep 1; done\n"
	if err := os.WriteFile(filepath.Join(bin, "arecord"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	// No model: had the recording been sent, talk would say so.
	d := startDaemon(t, filepath.Join(dir, "d"), "--model", "")
	cmd := exec.Command(lumenBin(t), "talk", "--server", d.URL)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "LUMEN_LIGHT=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 10*time.Second, "the speech to be played", func() bool { _, err := os.Stat(ready); return err == nil })
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "cancelled") || strings.Contains(out.String(), "sending") {
		t.Fatalf("lumen talk after Ctrl-C: %v\n%s", err, out.String())
	}
	if _, err := os.Stat(hit); err == nil {
		t.Fatal("the terminal's Ctrl-C reached arecord")
	}
}
