package mic_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent/mic"
	"github.com/lumen-home/lumen/agent/mic/mictest"
)

// useDevice points arecord at an ALSA file device that captures pcm.
// (t.Setenv: these tests do not run in parallel.)
func useDevice(t *testing.T, pcm []byte) {
	k, v, _ := strings.Cut(mictest.Device(t, pcm), "=")
	t.Setenv(k, v)
}

func record(t *testing.T, r mic.Recorder) (mic.Recording, []byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, err := r.Record(ctx)
	if err != nil {
		return rec, nil, err
	}
	pcm, f, err := mic.ReadWAV(rec.WAV)
	if err != nil || f != (mic.Format{Rate: mic.Rate, Channels: 1, Bits: 16}) {
		t.Fatalf("the recording's WAV: %v %+v", err, f)
	}
	if got := mictest.Length(pcm); got != rec.Length {
		t.Fatalf("Length %s, the WAV has %s", rec.Length, got)
	}
	return rec, pcm, nil
}

// loudSpan is the first and last sample over the threshold.
func loudSpan(pcm []byte) (first, last int) {
	first = -1
	for i := 0; i+1 < len(pcm); i += 2 {
		if v := int16(binary.LittleEndian.Uint16(pcm[i:])); v > 500 || v < -500 {
			if first < 0 {
				first = i / 2
			}
			last = i / 2
		}
	}
	return first, last
}

// Speech through the real arecord from an ALSA file device: the
// recording is the speech, whole, with its pauses between words, and
// little of the silence either side (the file's trailing silence, then
// the device's endless zeros, end it).
func TestRecordSpeech(t *testing.T) {
	speech := mictest.Speech(t, "make the light red for tonight")
	in := bytes.Join([][]byte{mictest.Silence(time.Second), speech, mictest.Silence(1500 * time.Millisecond)}, nil)
	useDevice(t, in)
	listening := 0
	rec, pcm, err := record(t, mic.Recorder{Listening: func() { listening++ }})
	if err != nil || listening != 1 {
		t.Fatalf("%v; Listening called %d times", err, listening)
	}
	if rec.End != mic.Ended {
		t.Fatalf("ended %s, want by silence", rec.End)
	}
	at := bytes.Index(in, pcm) / 2
	if at < 0 {
		t.Fatal("the recording is not the device's audio")
	}
	first, last := loudSpan(in)
	if at > first || at+len(pcm)/2 <= last {
		t.Fatalf("the recording (samples %d–%d) cuts the speech (samples %d–%d)", at, at+len(pcm)/2, first, last)
	}
	spoken := time.Duration(last-first) * time.Second / mic.Rate
	if rec.Length > spoken+2*mic.DefaultOpts.Pad+30*time.Millisecond {
		t.Fatalf("recorded %s for %s of speech: too much silence kept", rec.Length, spoken)
	}
	t.Logf("espeak-ng spoke for %s (%s with its own silences); recorded %s", spoken, mictest.Length(speech), rec.Length)
}

func TestRecordNothing(t *testing.T) {
	useDevice(t, mictest.Silence(500*time.Millisecond))
	_, _, err := record(t, mic.Recorder{Opts: mic.Opts{Lead: 3 * time.Second}})
	if !errors.Is(err, mic.ErrNothing) || !strings.Contains(err.Error(), "heard nothing in 3.0 s") {
		t.Fatalf("silence: %v", err)
	}
}

func TestRecordMax(t *testing.T) {
	useDevice(t, bytes.Repeat(mictest.Speech(t, "red"), 20))
	rec, _, err := record(t, mic.Recorder{Device: "lumentest", Opts: mic.Opts{Max: 2 * time.Second}})
	if err != nil || rec.End != mic.TooLong || rec.Length > 2*time.Second+30*time.Millisecond || rec.Length < 1500*time.Millisecond {
		t.Fatalf("speech without end: %v %s %s", err, rec.End, rec.Length)
	}
}

func TestRecordErrors(t *testing.T) {
	useDevice(t, nil)
	listening := func() { t.Error("Listening called without a device") }
	if _, _, err := record(t, mic.Recorder{Device: "nosuch", Listening: listening}); err == nil || !strings.Contains(err.Error(), "Unknown PCM nosuch") ||
		!strings.Contains(err.Error(), "--device") {
		t.Errorf("unknown device: %v", err)
	}
	if _, _, err := record(t, mic.Recorder{Bin: "lumen-no-such-arecord"}); err == nil || !strings.Contains(err.Error(), "install alsa-utils") {
		t.Errorf("no arecord: %v", err)
	}
	if _, _, err := record(t, mic.Recorder{Opts: mic.Opts{Max: time.Hour}}); err == nil || !strings.Contains(err.Error(), "at most 4m0s") {
		t.Errorf("an hour: %v", err)
	}
}

// fakeArecord is a stand-in for arecord running script.
func fakeArecord(t *testing.T, script string) string {
	bin := filepath.Join(t.TempDir(), "arecord")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return bin
}

// A device that stops (unplugged) ends the speech: what was heard is
// sent; stopping before any speech is nothing.
func TestRecordDeviceStops(t *testing.T) {
	raw := filepath.Join(t.TempDir(), "speech.raw")
	speech := mictest.Speech(t, "make it blue")
	if err := os.WriteFile(raw, speech, 0o600); err != nil {
		t.Fatal(err)
	}
	rec, pcm, err := record(t, mic.Recorder{Bin: fakeArecord(t, `exec cat "`+raw+`"`)})
	if err != nil || rec.End != mic.Speaking || !bytes.Contains(speech, pcm) {
		t.Fatalf("stopped while speaking: %v %s", err, rec.End)
	}
	if _, _, err := record(t, mic.Recorder{Bin: fakeArecord(t, `exit 0`)}); !errors.Is(err, mic.ErrNothing) || !strings.Contains(err.Error(), "stopped after 0.0 s") {
		t.Fatalf("stopped at once: %v", err)
	}
	if _, _, err := record(t, mic.Recorder{Bin: fakeArecord(t, `echo "arecord: main:831: audio open error: Device or resource busy" >&2; exit 1`)}); err == nil ||
		!strings.Contains(err.Error(), "Device or resource busy") {
		t.Fatalf("failed: %v", err)
	}
}

// Cancelling stops the recording and the device at once.
func TestRecordCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := mic.Recorder{Bin: fakeArecord(t, "exec sleep 60")}.Record(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// A device that delivers nothing is given up on Max plus 10 s after the
// start.
func TestRecordStuck(t *testing.T) {
	t.Parallel()
	_, err := mic.Recorder{Bin: fakeArecord(t, "exec sleep 60"), Opts: mic.Opts{Max: time.Second}}.Record(context.Background())
	if err == nil || !strings.Contains(err.Error(), "gave 0.0 s of audio in 11s: the device is stuck") {
		t.Fatalf("stuck: %v", err)
	}
}
