package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/mic"
	"github.com/lumen-home/lumen/eval"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/wire"
)

// Ask sends words to the light's agent in req's session, printing its
// steps as they happen, and waits for its answer at most wait.
func (t *Term) Ask(ctx context.Context, req messages.AskRequest, words []string, wait time.Duration) error {
	req.Text = strings.Join(words, " ")
	req.Who = "cli"
	nc, err := t.Open(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	session := req.Session
	if session == "" {
		session = "default"
	}
	if !t.JSON && !req.Async {
		stop, err := t.followAgent(nc, session)
		if err != nil {
			return err
		}
		defer stop()
	}
	b, err := t.requestWithin(ctx, nc, messages.VerbAsk, req, wait)
	if ctx.Err() != nil {
		// Ctrl-C stops the agent too, not just this command.
		_, _ = t.requestWithin(context.Background(), nc, messages.VerbAsk, messages.AskRequest{Session: session, Who: "cli"}, 5*time.Second)
		fmt.Fprintln(t.Stdout, describe.Cancelled())
		return nil
	}
	if err != nil {
		return err
	}
	var r messages.AskReply
	if raw, err := t.decodeReply(b, &r); raw || err != nil {
		return err
	}
	switch r.Status {
	case messages.AgentAccepted:
		fmt.Fprintln(t.Stdout, describe.AskAccepted(r.Session))
	case messages.AgentCancelled:
		fmt.Fprintln(t.Stdout, describe.Cancelled())
	case messages.AgentFailed:
		return fmt.Errorf("%s", r.Answer)
	default:
		fmt.Fprintln(t.Stdout, r.Answer)
	}
	t.printWebhooks(r.Webhooks)
	return nil
}

// TalkOpts are lumen talk's flags.
type TalkOpts struct {
	Session, Out string
	NoPlay       bool
	Rec          mic.Recorder
	Wait, Max    time.Duration
}

// Talk sends a spoken request (files[0], or recorded from the
// microphone) to the light's agent, and plays or saves its spoken answer.
func (t *Term) Talk(ctx context.Context, cmd *cobra.Command, files []string, o TalkOpts) error {
	var audio []byte
	if len(files) == 1 {
		for _, f := range []string{"device", "max", "threshold"} {
			if cmd.Flags().Changed(f) {
				return Usage(fmt.Errorf("--%s is for recording from the microphone; a file is sent as it is", f))
			}
		}
		var err error
		if audio, err = agent.ReadAudio(files[0]); err != nil {
			return err
		}
	}
	// Connected before recording: a daemon that is not there is
	// said before anyone speaks.
	nc, err := t.Open(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	if o.Session == "" {
		o.Session = "default"
	}
	if !t.JSON {
		stop, err := t.followAgent(nc, o.Session)
		if err != nil {
			return err
		}
		defer stop()
	}
	if len(files) == 0 {
		o.Rec.Max = o.Max
		if audio, err = t.listen(ctx, o.Rec); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(t.Stdout, describe.Cancelled())
				return nil
			}
			return err
		}
	}
	msg := &nats.Msg{Data: audio, Header: nats.Header{}}
	msg.Header.Set(messages.HeaderSession, o.Session)
	msg.Header.Set(messages.HeaderWho, messages.WhoCLI)
	b, err := wire.New(nc, wire.WithTimeout(o.Wait)).RequestMsg(ctx, t.Light, messages.VerbTalk, msg)
	if err := t.Explain(err, o.Wait); err != nil {
		return err
	}
	var r messages.TalkReply
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("unexpected reply: %.200s", b)
	}
	if t.JSON {
		return t.PrintJSON(b)
	}
	fmt.Fprintln(t.Stdout, describe.Heard(r.Transcript))
	switch {
	case r.Status == messages.AgentCancelled:
		fmt.Fprintln(t.Stdout, describe.Cancelled())
		return nil
	case r.Answer != "":
		fmt.Fprintln(t.Stdout, r.Answer)
	}
	if len(r.Audio) == 0 {
		if r.SpeechErr != "" {
			fmt.Fprintln(t.Stderr, describe.NoSpokenAnswer(r.SpeechErr))
		}
	} else if err := t.playOrSave(ctx, r.Audio, o.Out, o.NoPlay); err != nil {
		return err
	}
	if r.Status == messages.AgentFailed {
		return fmt.Errorf("the agent failed")
	}
	return nil
}

// listen records a spoken request from the microphone, saying on stderr
// what it does.
func (t *Term) listen(ctx context.Context, r mic.Recorder) ([]byte, error) {
	r.Listening = func() { fmt.Fprintln(t.Stderr, describe.Listening()) }
	rec, err := r.Record(ctx)
	if err != nil {
		return nil, err
	}
	if rec.End == mic.TooLong {
		fmt.Fprintln(t.Stderr, describe.RecordingTooLong(r.Max))
	}
	fmt.Fprintln(t.Stderr, describe.RecordingSent(rec.Length))
	return rec.WAV, nil
}

// answerFile is where a spoken answer goes that lumen talk could not
// play and was given no --out for.
const answerFile = "lumen-answer.wav"

// playOrSave plays audio (agent.Play), or writes it to out.
func (t *Term) playOrSave(ctx context.Context, audio []byte, out string, noPlay bool) error {
	if out == "" && !noPlay {
		err := agent.Play(ctx, audio)
		if err == nil {
			return nil
		}
		fmt.Fprintln(t.Stderr, describe.PlayFailed(err, answerFile))
	}
	if out == "" {
		out = answerFile
	}
	if err := os.WriteFile(out, audio, 0o644); err != nil {
		return err
	}
	fmt.Fprintln(t.Stdout, describe.AnswerAudio(out, len(audio)))
	return nil
}

// evalModels are the models to evaluate: models, else $LUMEN_MODEL (or
// OpenAI's default with only $OPENAI_API_KEY); ok is false when there is
// none or no endpoint for them.
func evalModels(cfg *eval.Config, models []string) ([]string, bool) {
	cfg.Agent.APIKey = os.Getenv("OPENAI_API_KEY")
	if len(models) == 0 {
		cfg.Agent.Model = os.Getenv("LUMEN_MODEL")
		if m := cfg.Agent.ModelName(); m != "" {
			models = []string{m}
		}
	}
	return models, len(models) > 0 && (agent.ModelConfig{BaseURL: cfg.Agent.BaseURL, APIKey: cfg.Agent.APIKey, Model: models[0]}).Configured()
}

const noModel = "no model to evaluate: give --model (or $LUMEN_MODEL) and --openai-base-url (or $OPENAI_BASE_URL, or $OPENAI_API_KEY for OpenAI); for example --openai-base-url http://localhost:11434/v1 --model llama3.1 for Ollama"

// EvalEveryday runs the everyday corpus (the built-in one, or file)
// without a model and with each model there is, and prints the failures
// and a line per mode.
func (t *Term) EvalEveryday(ctx context.Context, cfg eval.Config, models []string, file string) error {
	models, ok := evalModels(&cfg, models)
	switch {
	case ok:
		cfg.Models = models
	case len(models) > 0: // a model, but no endpoint
		return Usage(errors.New(noModel))
	}
	e, err := eval.BuiltinEveryday()
	if file != "" {
		e, err = eval.LoadEveryday(file)
	}
	if err != nil {
		return err
	}
	if !t.JSON && len(cfg.Models) > 0 {
		done := map[string]int{}
		cfg.EverydayFinished = func(r eval.EverydayResult) {
			if done[r.Mode]++; r.Mode != eval.Local && done[r.Mode]%50 == 0 {
				fmt.Fprintln(t.Stderr, describe.EvalCase(done[r.Mode], len(e.Cases), r.Mode))
			}
		}
	}
	results, err := eval.RunEveryday(ctx, e, cfg)
	if t.JSON {
		b, jerr := json.MarshalIndent(struct {
			Results   []eval.EverydayResult  `json:"results"`
			Summaries []eval.EverydaySummary `json:"summaries"`
		}{results, eval.SummarizeEveryday(results)}, "", "  ")
		if jerr != nil {
			return jerr
		}
		fmt.Fprintln(t.Stdout, string(b))
	} else {
		eval.WriteEveryday(t.Stdout, e.Name, results)
	}
	return err
}

// Eval judges models with the suite (the built-in one, or casesFile)
// and prints each case and a summary per model.
func (t *Term) Eval(ctx context.Context, cfg eval.Config, models []string, casesFile string) error {
	models, ok := evalModels(&cfg, models)
	if !ok {
		return Usage(errors.New(noModel))
	}
	if cfg.Repeat < 1 {
		return Usage(fmt.Errorf("--repeat %d: give how many times to run each case, 1 or more", cfg.Repeat))
	}
	suite, err := eval.Builtin()
	if casesFile != "" {
		suite, err = eval.Load(casesFile)
	}
	if err != nil {
		return err
	}
	cfg.Models = models
	total := len(suite.Cases) * len(models) * cfg.Repeat
	if len(cfg.Only) > 0 {
		total = len(cfg.Only) * len(models) * cfg.Repeat
	}
	done := 0
	cfg.Started = func(model, name string, run, of int) {
		if t.JSON {
			fmt.Fprintln(t.Stderr, describe.EvalStarted(done+1, total, model, name))
		}
	}
	lastModel := ""
	cfg.Finished = func(r eval.Result) {
		done++
		if t.JSON {
			return
		}
		if r.Model != lastModel {
			fmt.Fprintf(t.Stdout, "%s\n", r.Model)
			lastModel = r.Model
		}
		fmt.Fprintln(t.Stdout, describe.EvalCase(done, total, r.Line()))
	}
	results, err := eval.Run(ctx, suite, cfg)
	summaries := eval.Summarize(results)
	if t.JSON {
		b, jerr := json.MarshalIndent(struct {
			Results   []eval.Result  `json:"results"`
			Summaries []eval.Summary `json:"summaries"`
		}{results, summaries}, "", "  ")
		if jerr != nil {
			return jerr
		}
		fmt.Fprintln(t.Stdout, string(b))
	} else {
		fmt.Fprintln(t.Stdout)
		for _, s := range summaries {
			fmt.Fprintln(t.Stdout, s)
		}
	}
	return err
}
