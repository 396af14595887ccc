// Package mic records a spoken request from the microphone: arecord
// (alsa-utils) captures 16 kHz mono PCM, and a silence detector ends the
// recording a second after the speaker stops. The detector is pure: it
// counts time in samples, so it judges a recording the same whether it
// arrives in real time from a microphone or at once from a file.
package mic

import (
	"fmt"
	"math"
	"time"
)

// Rate is the sample rate recordings are made at: speech-to-text models
// resample to 16 kHz anyway.
const Rate = 16000

// MaxLength is the longest recording: at Rate, 16-bit mono, its WAV stays
// under the 8 MiB a spoken request may carry (agent.MaxAudio).
const MaxLength = 4 * time.Minute

// Opts tune when speech starts and ends; zero fields take DefaultOpts'.
type Opts struct {
	// Threshold is the RMS of a frame at or above which it is sound, not
	// silence (full scale is 32767).
	Threshold int
	// Silence after speech that ends the recording.
	Silence time.Duration
	// Lead is how long to wait for speech to start.
	Lead time.Duration
	// Max is the longest recording, the wait for speech included.
	Max time.Duration
	// MinSpeech is how long sound must last, unbroken, to be speech:
	// shorter is a click or a knock.
	MinSpeech time.Duration
	// Pad is the quiet kept either side of the speech: soft beginnings and
	// ends of words fall under the threshold.
	Pad time.Duration
}

// DefaultOpts: a threshold of about 1.5% of full scale (-36 dBFS), well
// over a quiet room's noise through a usual microphone and under
// speech's.
var DefaultOpts = Opts{Threshold: 500, Silence: time.Second, Lead: 10 * time.Second, Max: 30 * time.Second,
	MinSpeech: 100 * time.Millisecond, Pad: 300 * time.Millisecond}

// withDefaults fills the zero fields and checks the others.
func (o Opts) withDefaults() (Opts, error) {
	d := DefaultOpts
	for _, f := range []struct{ v, def *time.Duration }{{&o.Silence, &d.Silence}, {&o.Lead, &d.Lead}, {&o.Max, &d.Max},
		{&o.MinSpeech, &d.MinSpeech}, {&o.Pad, &d.Pad}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if o.Threshold == 0 {
		o.Threshold = d.Threshold
	}
	switch {
	case o.Max < 0 || o.Max > MaxLength:
		return o, fmt.Errorf("mic: a recording may last at most %s (the most a spoken request may carry), not %s", MaxLength, o.Max)
	case o.Threshold < 0 || o.Threshold > math.MaxInt16:
		return o, fmt.Errorf("mic: the threshold is an RMS level from 1 to %d, not %d", math.MaxInt16, o.Threshold)
	case o.Silence < 0 || o.Lead < 0 || o.MinSpeech < 0 || o.Pad < 0:
		return o, fmt.Errorf("mic: durations may not be negative")
	}
	return o, nil
}

// State is where a recording is.
type State int

const (
	// Waiting: no speech yet.
	Waiting State = iota
	// Speaking: speech heard, not yet followed by Silence.
	Speaking
	// Ended: speech, then Silence of quiet. The recording is done.
	Ended
	// TooLong: Max reached after speech began. The recording is done.
	TooLong
	// Nothing: Lead (or Max) passed and no speech began. Nothing to send.
	Nothing
)

// Done says whether the recording is over.
func (s State) Done() bool { return s >= Ended }

func (s State) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Speaking:
		return "speaking"
	case Ended:
		return "ended"
	case TooLong:
		return "too long"
	case Nothing:
		return "nothing"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Detector finds the speech in a stream of frames of samples.
type Detector struct {
	o                       Opts
	silence, lead, max, min int // Opts' durations, in samples
	pad                     int
	state                   State
	n                       int // samples seen
	run                     int // first sample of the current run of sound, or -1
	start, end              int // the speech: its first sample and the end of its last sound
}

// NewDetector makes a detector for samples at rate.
func NewDetector(rate int, o Opts) (*Detector, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	at := func(d time.Duration) int { return int(d * time.Duration(rate) / time.Second) }
	return &Detector{o: o, silence: at(o.Silence), lead: at(o.Lead), max: at(o.Max), min: at(o.MinSpeech), pad: at(o.Pad), run: -1}, nil
}

// Frame judges the next frame (a few tens of milliseconds) as sound or
// silence and returns the state after it. Once the state is Done, more
// frames change nothing.
func (d *Detector) Frame(samples []int16) State {
	if d.state.Done() || len(samples) == 0 {
		return d.state
	}
	from := d.n
	d.n += len(samples)
	if loud(samples, d.o.Threshold) {
		if d.run < 0 {
			d.run = from
		}
		if d.state == Waiting && d.n-d.run >= d.min {
			d.state, d.start = Speaking, d.run
		}
		if d.state == Speaking {
			d.end = d.n
		}
	} else {
		d.run = -1
	}
	switch {
	case d.state == Speaking && d.n-d.end >= d.silence:
		d.state = Ended
	case d.n >= d.max && d.state == Speaking:
		d.state = TooLong
	case d.n >= d.max || d.state == Waiting && d.run < 0 && d.n >= d.lead:
		d.state = Nothing
	}
	return d.state
}

// State is the state after the last frame.
func (d *Detector) State() State { return d.state }

// Samples is how many samples the detector has judged.
func (d *Detector) Samples() int { return d.n }

// Clip is the part of the samples seen to keep: the speech with Pad
// either side, within what was seen; empty without speech.
func (d *Detector) Clip() (from, to int) {
	if d.state == Waiting || d.state == Nothing {
		return 0, 0
	}
	end := d.end
	if d.state == TooLong {
		end = d.n
	}
	return max(0, d.start-d.pad), min(d.n, end+d.pad)
}

// loud says whether samples' RMS reaches threshold.
func loud(samples []int16, threshold int) bool {
	var sum float64
	for _, s := range samples {
		sum += float64(s) * float64(s)
	}
	return sum/float64(len(samples)) >= float64(threshold)*float64(threshold)
}
