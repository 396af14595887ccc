package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/mic"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/wire"
)

func newAsk(a *app) *cobra.Command {
	var req messages.AskRequest
	wait := cli.Duration(30 * time.Minute)
	cmd := &cobra.Command{
		Use:   "ask TEXT…",
		Short: "Tell the light's agent what you want, in plain words",
		Long: `Ask the light's agent (an LLM configured on 'lumen up' with LUMEN_MODEL and
OPENAI_BASE_URL/OPENAI_API_KEY) to change how the light behaves. Each tool
call it makes is printed as it happens, then its answer.

Some calls need your approval (defining a tool, a data source reaching a new
host, deleting rules or states, creating over a name the light already has):
ask then waits and prints the approval id;
approve with 'lumen approve ID' (or hold the light's button), refuse with
'lumen reject ID' (or click it). A new ask to the same session cancels the one
in flight; an empty ask ("") only cancels, and so does Ctrl-C.

Exit status: 0 when the agent finished, asked a question or was stopped
after its maximum steps; 1 when it failed (model unreachable, not configured).`,
		Example: `  lumen ask "next 3 clicks red, then back to normal"
  lumen ask --light kitchen "blue when it's cold outside"
  lumen ask --session evening "dim it after 22:00"
  lumen ask ""                      # cancel what the agent is doing`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, words []string) error {
			req.Text = strings.Join(words, " ")
			req.Who = "cli"
			nc, err := a.Open(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			session := req.Session
			if session == "" {
				session = "default"
			}
			if !a.JSON && !req.Async {
				stop, err := a.FollowAgent(nc, session)
				if err != nil {
					return err
				}
				defer stop()
			}
			b, err := a.RequestWithin(cmd.Context(), nc, messages.VerbAsk, req, time.Duration(wait))
			if cmd.Context().Err() != nil {
				// Ctrl-C stops the agent too, not just this command.
				_, _ = a.RequestWithin(context.Background(), nc, messages.VerbAsk, messages.AskRequest{Session: session, Who: "cli"}, 5*time.Second)
				fmt.Fprintln(a.Stdout, "cancelled")
				return nil
			}
			if err != nil {
				return err
			}
			var r messages.AskReply
			if raw, err := a.DecodeReply(b, &r); raw || err != nil {
				return err
			}
			switch r.Status {
			case messages.AgentAccepted:
				fmt.Fprintf(a.Stdout, "accepted in session %s; follow it with 'lumen tail' or 'lumen sessions %s'\n", r.Session, r.Session)
			case messages.AgentCancelled:
				fmt.Fprintln(a.Stdout, "cancelled")
			case messages.AgentFailed:
				return fmt.Errorf("%s", r.Answer)
			default:
				fmt.Fprintln(a.Stdout, r.Answer)
			}
			a.PrintWebhooks(r.Webhooks)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Session, "session", "", "the conversation to continue (default \"default\")")
	f.BoolVar(&req.Async, "async", false, "return at once; the agent works on")
	f.Var(&wait, "wait", "how long to wait for the agent, approvals included")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newApproval(a *app, approve bool) *cobra.Command {
	verb, use, short := messages.VerbReject, "reject [ID]", "Refuse a call the agent waits to make"
	if approve {
		verb, use, short = messages.VerbApprove, "approve [ID]", "Allow a call the agent waits to make"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `. The id is printed by 'lumen ask' and shown by 'lumen sessions';
without one, the light's only pending approval is meant.`,
		Example: fmt.Sprintf("  lumen %s default-7\n  lumen %s --light kitchen", verb, verb),
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, ids []string) error {
			r := messages.ApprovalRequest{Who: "cli"}
			if len(ids) == 1 {
				r.ID = ids[0]
			}
			var rep messages.ApprovalReply
			if raw, err := a.Query(cmd.Context(), verb, r, &rep); raw || err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "%s %s (%s, session %s)\n", rep.Decision, rep.Tool, rep.ID, rep.Session)
			return nil
		},
	}
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newSessions(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions [SESSION]",
		Short: "List the agent's sessions, or show one's transcript",
		Example: `  lumen sessions
  lumen sessions default`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, names []string) error {
			var r messages.SessionsRequest
			if len(names) == 1 {
				r.Session = names[0]
			}
			var rep messages.SessionsReply
			if raw, err := a.Query(cmd.Context(), messages.VerbSessions, r, &rep); raw || err != nil {
				return err
			}
			if r.Session == "" {
				return describe.Sessions(a.Stdout, rep.Sessions)
			}
			for _, s := range rep.Sessions {
				describe.Transcript(a.Stdout, s)
			}
			return nil
		},
	}
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newTalk(a *app) *cobra.Command {
	var session, out string
	var noPlay bool
	var rec mic.Recorder
	wait, maxLen := cli.Duration(30*time.Minute), cli.Duration(mic.DefaultOpts.Max)
	cmd := &cobra.Command{
		Use:   "talk [FILE.wav]",
		Short: "Speak to the light's agent: your voice in, the answer spoken back",
		Long: `Speak to the light's agent. Without a file, talk records from the microphone
(with arecord, from alsa-utils) until a second of silence after you speak,
or --max; it gives up when it hears nothing for 10 seconds. With FILE.wav it
sends that recording (WAV, up to 8 MiB) instead.

The daemon transcribes the speech with the endpoint's speech-to-text
(--transcribe-model on lumen up), runs it like 'lumen ask', and speaks the
answer with the endpoint's text-to-speech, or with the local espeak-ng when
the endpoint has none. The answer is played with the system's player
(aplay, paplay, ffplay, afplay) or written to --out. A recording with no
words only cancels what the agent is doing.

Speech is sound louder than --threshold (an RMS level; full scale is
32767): raise it in a noisy room if the recording runs to --max.`,
		Example: `  lumen talk                        # speak after "listening…"; a second of silence sends it
  lumen talk --device plughw:1,0    # another microphone ('arecord -L' lists them)
  lumen talk request.wav
  lumen talk request.wav --out answer.wav
  espeak-ng -w request.wav "make it red" && lumen talk request.wav`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, files []string) error {
			var audio []byte
			if len(files) == 1 {
				for _, f := range []string{"device", "max", "threshold"} {
					if cmd.Flags().Changed(f) {
						return cli.UsageError{Err: fmt.Errorf("--%s is for recording from the microphone; a file is sent as it is", f)}
					}
				}
				var err error
				if audio, err = agent.ReadAudio(files[0]); err != nil {
					return err
				}
			}
			// Connected before recording: a daemon that is not there is
			// said before anyone speaks.
			nc, err := a.Open(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			if session == "" {
				session = "default"
			}
			if !a.JSON {
				stop, err := a.FollowAgent(nc, session)
				if err != nil {
					return err
				}
				defer stop()
			}
			if len(files) == 0 {
				rec.Max = time.Duration(maxLen)
				if audio, err = a.listen(cmd.Context(), rec); err != nil {
					if cmd.Context().Err() != nil {
						fmt.Fprintln(a.Stdout, "cancelled")
						return nil
					}
					return err
				}
			}
			msg := &nats.Msg{Data: audio, Header: nats.Header{}}
			msg.Header.Set(messages.HeaderSession, session)
			msg.Header.Set(messages.HeaderWho, messages.WhoCLI)
			b, err := wire.New(nc, wire.WithTimeout(time.Duration(wait))).RequestMsg(cmd.Context(), a.Light, messages.VerbTalk, msg)
			if err := a.Explain(err, time.Duration(wait)); err != nil {
				return err
			}
			var r messages.TalkReply
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("unexpected reply: %.200s", b)
			}
			if a.JSON {
				return a.PrintJSON(b)
			}
			fmt.Fprintf(a.Stdout, "heard: %q\n", r.Transcript)
			switch {
			case r.Status == messages.AgentCancelled:
				fmt.Fprintln(a.Stdout, "cancelled")
				return nil
			case r.Answer != "":
				fmt.Fprintln(a.Stdout, r.Answer)
			}
			if len(r.Audio) == 0 {
				if r.SpeechErr != "" {
					fmt.Fprintf(a.Stderr, "lumen: no spoken answer: %s\n", r.SpeechErr)
				}
			} else if err := a.playOrSave(cmd.Context(), r.Audio, out, noPlay); err != nil {
				return err
			}
			if r.Status == messages.AgentFailed {
				return fmt.Errorf("the agent failed")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&session, "session", "", "the conversation to continue (default \"default\")")
	f.StringVarP(&out, "out", "o", "", "write the spoken answer to this WAV file instead of playing it")
	f.BoolVar(&noPlay, "no-play", false, "do not play the answer (write it to lumen-answer.wav unless --out)")
	f.Var(&wait, "wait", "how long to wait for the agent, approvals included")
	f.StringVar(&rec.Device, "device", "default", "the ALSA capture device to record from ('arecord -L' lists them)")
	f.Var(&maxLen, "max", fmt.Sprintf("the longest recording (at most %s)", mic.MaxLength))
	f.IntVar(&rec.Threshold, "threshold", mic.DefaultOpts.Threshold, "the RMS level over which sound is speech (full scale 32767)")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

// listen records a spoken request from the microphone, saying on stderr
// what it does.
func (a *app) listen(ctx context.Context, r mic.Recorder) ([]byte, error) {
	r.Listening = func() { fmt.Fprintln(a.Stderr, "listening… (speak; a second of silence ends it)") }
	rec, err := r.Record(ctx)
	if err != nil {
		return nil, err
	}
	if rec.End == mic.TooLong {
		fmt.Fprintf(a.Stderr, "stopped at --max %s (never a second of silence: a noisy room? raise --threshold)\n", r.Max)
	}
	fmt.Fprintf(a.Stderr, "heard %.1f s, sending…\n", rec.Length.Seconds())
	return rec.WAV, nil
}

// playOrSave plays audio (agent.Play), or writes it to out.
func (a *app) playOrSave(ctx context.Context, audio []byte, out string, noPlay bool) error {
	if out == "" && !noPlay {
		err := agent.Play(ctx, audio)
		if err == nil {
			return nil
		}
		fmt.Fprintf(a.Stderr, "lumen: %v; the answer is in lumen-answer.wav\n", err)
	}
	if out == "" {
		out = "lumen-answer.wav"
	}
	if err := os.WriteFile(out, audio, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(a.Stdout, "answer audio: %s (%d bytes)\n", out, len(audio))
	return nil
}
