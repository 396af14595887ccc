package mic_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent/mic"
)

// seg is a stretch of synthetic audio: a 300 Hz tone of amplitude amp
// (0 is silence) lasting ms milliseconds.
type seg struct{ ms, amp int }

func loud(ms int) seg  { return seg{ms, 3000} } // RMS 2121
func quiet(ms int) seg { return seg{ms, 0} }

func samples(segs []seg) []int16 {
	var out []int16
	for _, s := range segs {
		for i := range s.ms * mic.Rate / 1000 {
			out = append(out, int16(float64(s.amp)*math.Sin(2*math.Pi*300*float64(i)/mic.Rate)))
		}
	}
	return out
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// The detector fed 30 ms frames, as the recorder does. Segments are
// multiples of a frame so that every frame is all sound or all silence.
func TestDetector(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		opts     mic.Opts
		given    []seg
		want     mic.State
		from, to time.Duration // the clip
		seen     time.Duration // audio judged when it ended
	}{
		{name: "speech then a second of silence ends it", given: []seg{quiet(510), loud(990), quiet(3000)},
			want: mic.Ended, from: ms(210), to: ms(1800), seen: ms(2520)},
		{name: "a pause shorter than the silence does not end it", given: []seg{loud(510), quiet(960), loud(510), quiet(3000)},
			want: mic.Ended, from: 0, to: ms(2280), seen: ms(3000)},
		{name: "a click is not speech", given: []seg{quiet(990), loud(60), quiet(12000)},
			want: mic.Nothing, seen: ms(10020)},
		{name: "silence only: nothing after the lead", given: []seg{quiet(12000)},
			want: mic.Nothing, seen: ms(10020)},
		{name: "sound under the threshold is silence", given: []seg{{12000, 600}}, // RMS 424
			want: mic.Nothing, seen: ms(10020)},
		{name: "speech that begins as the lead ends is heard", given: []seg{quiet(9960), loud(990), quiet(3000)},
			want: mic.Ended, from: ms(9660), to: ms(11250), seen: ms(11970)},
		{name: "speech without a pause stops at the max", given: []seg{quiet(990), loud(31000)},
			want: mic.TooLong, from: ms(690), to: ms(30000), seen: ms(30000)},
		{name: "a shorter max and silence", opts: mic.Opts{Max: 5 * time.Second, Silence: 510 * time.Millisecond, Pad: 90 * time.Millisecond},
			given: []seg{quiet(300), loud(990), quiet(2000)}, want: mic.Ended, from: ms(210), to: ms(1380), seen: ms(1800)},
		{name: "a shorter lead", opts: mic.Opts{Lead: 3 * time.Second}, given: []seg{quiet(5000)},
			want: mic.Nothing, seen: ms(3000)},
		{name: "the max ends a wait longer than it", opts: mic.Opts{Max: 2 * time.Second}, given: []seg{quiet(5000)},
			want: mic.Nothing, seen: ms(2010)},
		{name: "the audio ends while speaking", given: []seg{quiet(300), loud(990)},
			want: mic.Speaking, from: 0, to: ms(1290), seen: ms(1290)},
		{name: "the audio ends before speech", given: []seg{quiet(2010)},
			want: mic.Waiting, seen: ms(2010)},
		{name: "a louder threshold", opts: mic.Opts{Threshold: 2500}, given: []seg{loud(990), quiet(12000)},
			want: mic.Nothing, seen: ms(10020)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := mic.NewDetector(mic.Rate, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			s := samples(c.given)
			const frame = mic.Rate * 30 / 1000
			for i := 0; i < len(s) && !d.State().Done(); i += frame {
				d.Frame(s[i:min(i+frame, len(s))])
			}
			from, to := d.Clip()
			at := func(n int) time.Duration { return time.Duration(n) * time.Second / mic.Rate }
			if d.State() != c.want || at(from) != c.from || at(to) != c.to || at(d.Samples()) != c.seen {
				t.Errorf("%s, clip %s–%s, after %s; want %s, clip %s–%s, after %s",
					d.State(), at(from), at(to), at(d.Samples()), c.want, c.from, c.to, c.seen)
			}
		})
	}
}

func TestDetectorOpts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		opts mic.Opts
		want string
	}{
		{mic.Opts{Max: 5 * time.Minute}, "at most 4m0s"},
		{mic.Opts{Max: -time.Second}, "at most 4m0s"},
		{mic.Opts{Threshold: 40000}, "from 1 to 32767"},
		{mic.Opts{Silence: -time.Second}, "negative"},
	} {
		if _, err := mic.NewDetector(mic.Rate, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.opts, err, c.want)
		}
	}
}
