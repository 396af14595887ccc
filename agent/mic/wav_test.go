package mic_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/mic"
	"github.com/lumen-home/lumen/agent/mic/mictest"
)

func TestWAV(t *testing.T) {
	t.Parallel()
	pcm := []byte{1, 2, 3, 4, 5, 6}
	got, f, err := mic.ReadWAV(mic.WAV(pcm, mic.Rate))
	if err != nil || !bytes.Equal(got, pcm) || f != (mic.Format{Rate: mic.Rate, Channels: 1, Bits: 16}) {
		t.Fatalf("round trip: %v %v %+v", err, got, f)
	}
	// A streaming writer's data size, larger than the file: the data runs
	// to the end.
	w := mic.WAV(pcm, mic.Rate)
	copy(w[40:], []byte{0xff, 0xff, 0xff, 0x7f})
	if got, _, err := mic.ReadWAV(w); err != nil || !bytes.Equal(got, pcm) {
		t.Fatalf("streamed: %v %v", err, got)
	}
	for _, c := range []struct {
		name, want string
		b          []byte
	}{
		{"not a wav", "not a WAV file", []byte("hello, this is not audio at all")},
		{"no data", "no data chunk", mic.WAV(nil, mic.Rate)[:36]},
		{"not pcm", "not PCM", append(append([]byte(nil), mic.WAV(pcm, mic.Rate)[:20]...), append([]byte{3, 0}, mic.WAV(pcm, mic.Rate)[22:]...)...)},
	} {
		if _, _, err := mic.ReadWAV(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// The longest recording fits in a spoken request.
func TestMaxLengthFits(t *testing.T) {
	t.Parallel()
	if n := len(mic.WAV(mictest.Silence(mic.MaxLength), mic.Rate)); n > agent.MaxAudio {
		t.Fatalf("a WAV of %s is %d bytes, more than the %d a spoken request may carry", mic.MaxLength, n, agent.MaxAudio)
	}
}
