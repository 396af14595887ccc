package main_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/agent/mic"
	"github.com/lumen-home/lumen/agent/mic/mictest"
)

// lumen talk without a file records from the microphone: here the real
// arecord capturing from an ALSA file device (mictest) that plays speech
// spoken by espeak-ng between stretches of silence, then zeros without
// end. The endpoint gets the speech, not the silence around it, the agent
// answers and the light changes. Hearing nothing sends nothing; without
// arecord, or with a wrong device, talk says what to do; without a model
// the recording is refused as a file is (409).
func TestTalkMicrophone(t *testing.T) {
	t.Parallel()
	mictest.NeedArecord(t)
	dir := t.TempDir()
	speech := mictest.Speech(t, "make the light red for tonight")
	in := bytes.Join([][]byte{mictest.Silence(time.Second), speech, mictest.Silence(1500 * time.Millisecond)}, nil)
	device := mictest.Device(t, in)
	srv := agenttest.New(agenttest.Step{Calls: []agenttest.Call{scripted("setState", `{"name":"red","speak_directly":true}`)}})
	defer srv.Close()
	srv.SetTranscript("make the light red for tonight")
	d := startDaemon(t, filepath.Join(dir, "a"), agentArgs(srv)...)

	answer := filepath.Join(dir, "answer.wav")
	out, code := runCLIEnv(t, d.URL, []string{device}, "talk", "--out", answer)
	heard := regexp.MustCompile(`heard (\d+\.\d) s, sending…`).FindStringSubmatch(out)
	if code != 0 || !strings.Contains(out, "listening… (speak; a second of silence ends it)") || heard == nil ||
		!strings.Contains(out, `heard: "make the light red for tonight"`) || !strings.Contains(out, "The light is red now.") {
		t.Fatalf("lumen talk from the microphone: exit %d\n%s", code, out)
	}
	got := srv.Audio()
	if len(got) != 1 {
		t.Fatalf("the endpoint heard %d recordings", len(got))
	}
	pcm, f, err := mic.ReadWAV(got[0])
	if err != nil || f != (mic.Format{Rate: mic.Rate, Channels: 1, Bits: 16}) {
		t.Fatalf("the recording sent: %v %+v", err, f)
	}
	// What was sent is the device's audio, unchanged, from shortly before
	// the speech to shortly after it: at most the detector's padding
	// either side, so neither the file's silences nor the zeros after it.
	if !bytes.Contains(in, pcm) {
		t.Fatal("the recording sent is not the microphone's audio")
	}
	sent, spoken := mictest.Length(pcm), mictest.Length(speech)
	if sent < spoken-500*time.Millisecond || sent > spoken+2*mic.DefaultOpts.Pad {
		t.Fatalf("sent %s of audio for %s of speech (%s with the silences)", sent, spoken, mictest.Length(in))
	}
	if heard[1] != fmt.Sprintf("%.1f", sent.Seconds()) {
		t.Fatalf("said it heard %s s, sent %s", heard[1], sent)
	}
	nc := connect(t, d.URL)
	if st := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"]; st != "red" {
		t.Fatalf("state %v after the spoken request", st)
	}

	// Silence only: nothing is sent.
	quiet := mictest.Device(t, mictest.Silence(500*time.Millisecond))
	if out, code := runCLIEnv(t, d.URL, []string{quiet}, "talk"); code != 1 || !strings.Contains(out, "heard nothing in 10.0 s") {
		t.Fatalf("lumen talk to silence: exit %d\n%s", code, out)
	}
	// Without arecord, or with a device that is not there.
	if out, code := runCLIEnv(t, d.URL, []string{device, "PATH=" + t.TempDir()}, "talk"); code != 1 || !strings.Contains(out, "install alsa-utils") ||
		!strings.Contains(out, "or pass a WAV file") || strings.Contains(out, "listening") {
		t.Fatalf("lumen talk without arecord: exit %d\n%s", code, out)
	}
	if out, code := runCLIEnv(t, d.URL, []string{device}, "talk", "--device", "nosuch"); code != 1 || !strings.Contains(out, "Unknown PCM nosuch") ||
		!strings.Contains(out, "arecord -L") || strings.Contains(out, "listening") {
		t.Fatalf("lumen talk --device nosuch: exit %d\n%s", code, out)
	}
	if out, code := runCLIEnv(t, d.URL, []string{device}, "talk", "request.wav", "--device", "lumentest"); code != 2 || !strings.Contains(out, "a file is sent as it is") {
		t.Fatalf("lumen talk FILE --device: exit %d\n%s", code, out)
	}
	if n := len(srv.Audio()); n != 1 {
		t.Fatalf("the endpoint heard %d recordings; only the first had speech", n)
	}

	// No model: the recording is sent and refused, as a file would be.
	d2 := startDaemon(t, filepath.Join(dir, "b"), "--model", "")
	if out, code := runCLIEnv(t, d2.URL, []string{device}, "talk"); code != 1 || !strings.Contains(out, "sending…") ||
		!strings.Contains(out, "The agent is not configured") || !strings.Contains(out, "(code 409)") {
		t.Fatalf("lumen talk without a model: exit %d\n%s", code, out)
	}
}
