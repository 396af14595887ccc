// Package mictest gives tests a microphone without a sound card: an ALSA
// file device whose capture reads raw samples from a file, and speech to
// put in it, spoken by espeak-ng.
package mictest

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent/mic"
)

// ConfigEnv names the ALSA configuration file. Set, it replaces the
// system's configuration: the device below is all arecord sees, whatever
// the machine's sound cards, /etc/asound.conf or ~/.asoundrc.
const ConfigEnv = "ALSA_CONFIG_PATH"

// Device writes pcm (16-bit little-endian mono at mic.Rate) and an ALSA
// configuration whose capture devices "default" and "lumentest" read it,
// and returns the configuration's ConfigEnv=path for a child's
// environment. Past the file's end the device reads zeros, as fast as it
// is read (the null device it wraps has no clock): a recording of it ends
// by the detector, in no time.
func Device(tb testing.TB, pcm []byte) string {
	tb.Helper()
	NeedArecord(tb)
	dir := tb.TempDir()
	raw, conf := filepath.Join(dir, "mic.raw"), filepath.Join(dir, "asound.conf")
	if err := os.WriteFile(raw, pcm, 0o600); err != nil {
		tb.Fatal(err)
	}
	// The file device writes what it captures to file as well; reads come
	// from infile.
	cfg := fmt.Sprintf(`pcm.lumentest {
	type file
	slave.pcm { type null }
	file "/dev/null"
	infile %q
	format "raw"
}
pcm.default "lumentest"
`, raw)
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return ConfigEnv + "=" + conf
}

// NeedArecord fails the test without arecord: these tests always run,
// and the Taskfile installs it.
func NeedArecord(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("arecord"); err != nil {
		tb.Fatal("arecord is not installed: install alsa-utils (apt install alsa-utils; task test installs it)")
	}
}

// Speech returns text spoken by espeak-ng as 16-bit mono PCM at mic.Rate
// (espeak-ng speaks at 22050 Hz; this resamples). It fails the test
// without espeak-ng, which the Taskfile installs.
func Speech(tb testing.TB, text string) []byte {
	tb.Helper()
	wav := filepath.Join(tb.TempDir(), "speech.wav")
	if out, err := exec.Command("espeak-ng", "-w", wav, text).CombinedOutput(); err != nil {
		tb.Fatalf("espeak-ng (install espeak-ng; task test installs it): %v: %s", err, out)
	}
	b, err := os.ReadFile(wav)
	if err != nil {
		tb.Fatal(err)
	}
	pcm, f, err := mic.ReadWAV(b)
	if err != nil || f.Bits != 16 || f.Channels != 1 {
		tb.Fatalf("espeak-ng's WAV: %v %+v", err, f)
	}
	return Resample(pcm, f.Rate, mic.Rate)
}

// Resample converts 16-bit mono PCM from one rate to another by linear
// interpolation: enough for a detector that judges loudness.
func Resample(pcm []byte, from, to int) []byte {
	in := len(pcm) / 2
	at := func(i int) float64 { return float64(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) }
	n := in * to / from
	out := make([]byte, 2*n)
	for i := range n {
		pos := float64(i) * float64(from) / float64(to)
		j := int(pos)
		v := at(min(j, in-1))
		if j+1 < in {
			v += (at(j+1) - v) * (pos - float64(j))
		}
		binary.LittleEndian.PutUint16(out[2*i:], uint16(int16(v)))
	}
	return out
}

// Silence is d of zeros at mic.Rate.
func Silence(d time.Duration) []byte { return make([]byte, Samples(d)*2) }

// Samples is how many samples d is at mic.Rate.
func Samples(d time.Duration) int { return int(d * mic.Rate / time.Second) }

// Length is how long pcm (16-bit mono at mic.Rate) lasts.
func Length(pcm []byte) time.Duration { return time.Duration(len(pcm)/2) * time.Second / mic.Rate }
