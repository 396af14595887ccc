package main

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/lumen-home/lumen/actors/daemon"
)

// agentFlags are lumen up's flags of the agent (daemon.AgentConfig), but
// --model, which lumen up takes once and lumen eval several times.
func agentFlags(f *pflag.FlagSet, c *daemon.AgentConfig) {
	f.StringVar(&c.BaseURL, "openai-base-url", os.Getenv("OPENAI_BASE_URL"), "OpenAI-compatible endpoint of the agent's model, e.g. http://localhost:11434/v1 for Ollama (default $OPENAI_BASE_URL, else api.openai.com)")
	f.IntVar(&c.MaxTurns, "agent-max-turns", c.MaxTurns, "model replies per request before the agent stops")
	f.DurationVar(&c.Timeout, "agent-timeout", c.Timeout, "how long one model call may take")
	f.StringArrayVar(&c.Forbid, "agent-forbid", nil, "an agent tool it may never call, e.g. defineTool (repeatable)")
	f.BoolVar(&c.Stream, "agent-stream", false, "ask the model for streamed replies")
	f.StringVar(&c.TranscribeModel, "transcribe-model", c.TranscribeModel, "speech-to-text model of the endpoint, for lumen talk")
	f.StringVar(&c.SpeechModel, "speech-model", c.SpeechModel, "text-to-speech model of the endpoint; espeak: the local espeak-ng only (also the fallback)")
	f.StringVar(&c.Voice, "voice", c.Voice, "voice of the endpoint's speech")
}
