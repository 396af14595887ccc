package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/openai/openai-go/v3"
)

// MaxAudio bounds one spoken request (8 MiB: about 4 minutes of 16 kHz
// 16-bit mono WAV).
const MaxAudio = 8 << 20

// Transcriber turns speech into text.
type Transcriber interface {
	Transcribe(ctx context.Context, audio []byte, filename string) (string, error)
}

// Speaker turns text into audio.
type Speaker interface {
	Speak(ctx context.Context, text string) (Speech, error)
}

// Speech is spoken text: the audio, its format and who spoke it (api or
// espeak).
type Speech struct {
	Audio  []byte
	Format string
	By     string
}

// VoiceConfig chooses the audio models of the same OpenAI-compatible
// endpoint as the chat model.
type VoiceConfig struct {
	TranscribeModel string // default whisper-1
	SpeechModel     string // default tts-1; "espeak": local espeak-ng only
	Voice           string // default alloy
}

// The voice models asked for when none is configured: OpenAI's, which
// most OpenAI-compatible servers also answer to.
const (
	DefaultTranscribeModel = "whisper-1"
	DefaultSpeechModel     = "tts-1"
	DefaultVoice           = "alloy"
)

// Transcribe sends audio to the endpoint's /audio/transcriptions.
func (o *OpenAI) Transcribe(ctx context.Context, audio []byte, filename string) (string, error) {
	model := o.cfg.Voice.TranscribeModel
	if model == "" {
		model = DefaultTranscribeModel
	}
	if filename == "" {
		filename = "speech.wav"
	}
	res, err := o.client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File: openai.File(bytes.NewReader(audio), filename, "audio/wav"), Model: openai.AudioModel(model)})
	if err != nil {
		return "", apiErr(err)
	}
	return res.Text, nil
}

// Speak asks the endpoint's /audio/speech for a WAV.
func (o *OpenAI) Speak(ctx context.Context, text string) (Speech, error) {
	model, voice := o.cfg.Voice.SpeechModel, o.cfg.Voice.Voice
	if model == "" {
		model = DefaultSpeechModel
	}
	if voice == "" {
		voice = DefaultVoice
	}
	res, err := o.client.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{Input: text, Model: openai.SpeechModel(model),
		Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String(voice)}, ResponseFormat: openai.AudioSpeechNewParamsResponseFormatWAV})
	if err != nil {
		return Speech{}, apiErr(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 4*MaxAudio))
	if err != nil {
		return Speech{}, fmt.Errorf("agent: speech: %w", err)
	}
	return Speech{Audio: b, Format: "wav", By: "api"}, nil
}

// Espeak speaks with the local espeak-ng: the fallback when the endpoint
// has no speech (Ollama, llama.cpp) or fails.
type Espeak struct {
	Bin   string // default espeak-ng
	Voice string // espeak-ng -v; default its own
}

// Speak runs espeak-ng and returns its WAV.
func (e Espeak) Speak(ctx context.Context, text string) (Speech, error) {
	bin := e.Bin
	if bin == "" {
		bin = "espeak-ng"
	}
	args := []string{"--stdout"}
	if e.Voice != "" {
		args = append(args, "-v", e.Voice)
	}
	// The text goes on stdin, never as an argument: it cannot be read
	// as an option.
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = bytes.NewReader([]byte(text))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return Speech{}, fmt.Errorf("agent: no speech: the endpoint has none and %s is not installed (apt install espeak-ng)", bin)
		}
		return Speech{}, fmt.Errorf("agent: %s: %v: %s", bin, err, bytes.TrimSpace(errb.Bytes()))
	}
	return Speech{Audio: out.Bytes(), Format: "wav", By: "espeak"}, nil
}

// Fallback speaks with Primary, and with Secondary when Primary is nil
// or fails.
type Fallback struct {
	Primary, Secondary Speaker
	Logf               func(string, ...any)
}

// Speak tries both speakers in turn.
func (f Fallback) Speak(ctx context.Context, text string) (Speech, error) {
	if f.Primary != nil {
		sp, err := f.Primary.Speak(ctx, text)
		if err == nil {
			return sp, nil
		}
		if f.Logf != nil {
			f.Logf("agent: speech endpoint failed (%v); speaking with espeak-ng", err)
		}
	}
	return f.Secondary.Speak(ctx, text)
}

// Play plays a WAV with the first of the system's players (aplay,
// paplay, ffplay, afplay) that works, and waits until it has played.
func Play(ctx context.Context, wav []byte) error {
	f, err := os.CreateTemp("", "lumen-answer-*.wav")
	if err != nil {
		return fmt.Errorf("agent: play: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(wav)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("agent: play: %w", err)
	}
	for _, p := range [][]string{{"aplay", "-q"}, {"paplay"}, {"ffplay", "-nodisp", "-autoexit", "-loglevel", "quiet"}, {"afplay"}} {
		if _, err := exec.LookPath(p[0]); err != nil {
			continue
		}
		if exec.CommandContext(ctx, p[0], append(p[1:], f.Name())...).Run() == nil {
			return nil
		}
	}
	return errors.New("no audio player worked (aplay, paplay, ffplay, afplay)")
}

// ReadAudio reads a recording to send to talk, refusing one over MaxAudio
// before reading it: past the server's maximum payload a client cannot
// even send it.
func ReadAudio(path string) ([]byte, error) {
	if st, err := os.Stat(path); err == nil && st.Size() > MaxAudio {
		return nil, fmt.Errorf("talk: %s is %.1f MiB; a spoken request may be at most %d MiB (about 4 minutes of 16 kHz mono); record a shorter one", path, float64(st.Size())/(1<<20), MaxAudio>>20)
	}
	return os.ReadFile(path)
}
