package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/agent/mic"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
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
			return a.Ask(cmd.Context(), req, words, time.Duration(wait))
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
	var o cli.TalkOpts
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
			o.Wait, o.Max = time.Duration(wait), time.Duration(maxLen)
			return a.Talk(cmd.Context(), cmd, files, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Session, "session", "", "the conversation to continue (default \"default\")")
	f.StringVarP(&o.Out, "out", "o", "", "write the spoken answer to this WAV file instead of playing it")
	f.BoolVar(&o.NoPlay, "no-play", false, "do not play the answer (write it to lumen-answer.wav unless --out)")
	f.Var(&wait, "wait", "how long to wait for the agent, approvals included")
	f.StringVar(&o.Rec.Device, "device", "default", "the ALSA capture device to record from ('arecord -L' lists them)")
	f.Var(&maxLen, "max", fmt.Sprintf("the longest recording (at most %s)", mic.MaxLength))
	f.IntVar(&o.Rec.Threshold, "threshold", mic.DefaultOpts.Threshold, "the RMS level over which sound is speech (full scale 32767)")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
