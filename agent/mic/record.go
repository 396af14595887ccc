package mic

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// ErrNothing is the error of a recording in which no speech began.
var ErrNothing = errors.New("mic: heard nothing")

// frame is how much audio the detector judges at a time: 30 ms.
const frame = Rate * 30 / 1000

// stall is how long past Max a recording may take before the device is
// deemed stuck: a microphone delivers audio in real time.
const stall = 10 * time.Second

// Recorder records from an ALSA capture device with arecord.
type Recorder struct {
	Device string // ALSA capture device (arecord -D); default "default"
	Bin    string // default arecord
	Opts
	// Listening, if set, is called when the first audio arrives: the
	// device is open and the speaker may start.
	Listening func()
}

// Recording is what Record heard.
type Recording struct {
	WAV    []byte        // 16 kHz 16-bit mono: the speech and Pad either side
	Length time.Duration // of the WAV's audio
	End    State         // Ended, TooLong, or Speaking when the device stopped first
}

// Record listens until the speech is over and returns it as a WAV. With
// no speech it returns an error wrapping ErrNothing.
func (r Recorder) Record(ctx context.Context) (Recording, error) {
	d, err := NewDetector(Rate, r.Opts)
	if err != nil {
		return Recording{}, err
	}
	bin, dev := r.Bin, r.Device
	if bin == "" {
		bin = "arecord"
	}
	if dev == "" {
		dev = "default"
	}
	if _, err := exec.LookPath(bin); err != nil {
		return Recording{}, fmt.Errorf("mic: %s is not installed: install alsa-utils (apt install alsa-utils) to record from the microphone, or pass a WAV file", bin)
	}
	rctx, cancel := context.WithTimeout(ctx, d.o.Max+stall)
	defer cancel()
	cmd := exec.CommandContext(rctx, bin, "-q", "-D", dev, "-t", "raw", "-f", "S16_LE", "-c", "1", "-r", fmt.Sprint(Rate))
	cmd.SysProcAttr = procAttr()
	var stderr head
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Recording{}, fmt.Errorf("mic: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return Recording{}, fmt.Errorf("mic: %s: %w", bin, err)
	}
	pcm, rerr := listen(out, d, r.Listening)
	stuck := rctx.Err() != nil && ctx.Err() == nil
	// A device still running is stopped before deciding; one that ended
	// its stream is left to exit by itself (killing it then would race
	// its exit and report the kill as its error).
	if d.State().Done() || rerr != nil {
		cancel()
	}
	werr := cmd.Wait()
	switch st := d.State(); {
	case st == Ended || st == TooLong || st == Speaking && ctx.Err() == nil:
		// The device stopping (unplugged, stuck, or the end of a file
		// device) ends the speech too.
		from, to := d.Clip()
		return Recording{WAV: WAV(pcm[2*from:2*to], Rate), Length: time.Duration(to-from) * time.Second / Rate, End: st}, nil
	case ctx.Err() != nil:
		return Recording{}, fmt.Errorf("mic: %w", ctx.Err())
	case stuck:
		return Recording{}, fmt.Errorf("mic: %s -D %s gave %s of audio in %s: the device is stuck (is another program using it?)",
			bin, dev, seconds(d.Samples()), d.o.Max+stall)
	case st == Nothing:
		return Recording{}, fmt.Errorf("%w in %s: is the microphone on and not muted (alsamixer)? arecord -L lists the capture devices; choose one with --device", ErrNothing, seconds(d.Samples()))
	case werr != nil:
		return Recording{}, fmt.Errorf("mic: %s -D %s: %v: %s (arecord -L lists the capture devices; choose one with --device)", bin, dev, werr, stderr.String())
	case rerr != nil:
		return Recording{}, fmt.Errorf("mic: reading %s: %w", bin, rerr)
	}
	return Recording{}, fmt.Errorf("%w: the recording stopped after %s, before any speech", ErrNothing, seconds(d.Samples()))
}

// listen feeds r's PCM to d a frame at a time until d is done or r ends,
// and returns the PCM read. It calls started, if set, on the first audio.
func listen(r io.Reader, d *Detector, started func()) ([]byte, error) {
	var pcm []byte
	buf := make([]byte, 2*frame)
	samples := make([]int16, frame)
	for !d.State().Done() {
		n, err := io.ReadFull(r, buf)
		n -= n % 2
		for i := range n / 2 {
			samples[i] = int16(binary.LittleEndian.Uint16(buf[2*i:]))
		}
		if len(pcm) == 0 && n > 0 && started != nil {
			started()
		}
		pcm = append(pcm, buf[:n]...)
		d.Frame(samples[:n/2])
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return pcm, nil
		}
		if err != nil {
			return pcm, err
		}
	}
	return pcm, nil
}

// seconds prints n samples as seconds.
func seconds(n int) string { return fmt.Sprintf("%.1f s", float64(n)/Rate) }

// head keeps the first 2 KiB written to it: arecord's error, not an
// endless stream of overrun warnings.
type head struct{ b bytes.Buffer }

func (h *head) Write(p []byte) (int, error) {
	h.b.Write(p[:min(len(p), max(0, 2048-h.b.Len()))])
	return len(p), nil
}

func (h *head) String() string { return strings.TrimSpace(h.b.String()) }
