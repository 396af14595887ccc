package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/spf13/pflag"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/wire"
)

// AgentConfig configures the agent: the `agent:` key of lumen.yaml, the
// --model… flags, and the usual OpenAI environment variables. The API key
// is read from OPENAI_API_KEY only, never from a flag or the file, so it
// stays out of process listings and backups.
type AgentConfig struct {
	BaseURL  string        `yaml:"base_url"`
	Model    string        `yaml:"model"`
	MaxTurns int           `yaml:"max_turns"`
	Timeout  time.Duration `yaml:"timeout"`
	Forbid   []string      `yaml:"forbid"`
	Stream   bool          `yaml:"stream"`
	// Voice: the endpoint's audio models; speech_model "espeak" speaks
	// with the local espeak-ng only (also the fallback when the endpoint
	// has no speech).
	TranscribeModel string `yaml:"transcribe_model"`
	SpeechModel     string `yaml:"speech_model"`
	Voice           string `yaml:"voice"`
	apiKey          string
}

func agentFlags(f *pflag.FlagSet, c *AgentConfig) {
	f.StringVar(&c.BaseURL, "openai-base-url", os.Getenv("OPENAI_BASE_URL"), "OpenAI-compatible endpoint of the agent's model, e.g. http://localhost:11434/v1 for Ollama (default $OPENAI_BASE_URL, else api.openai.com)")
	f.StringVar(&c.Model, "model", os.Getenv("LUMEN_MODEL"), "the agent's model, e.g. gpt-4o-mini or llama3.1 (default $LUMEN_MODEL; none: the agent is off)")
	f.IntVar(&c.MaxTurns, "agent-max-turns", agent.DefaultMaxTurns, "model replies per request before the agent stops")
	f.DurationVar(&c.Timeout, "agent-timeout", agent.DefaultCallTimeout, "how long one model call may take")
	f.StringArrayVar(&c.Forbid, "agent-forbid", nil, "an agent tool it may never call, e.g. defineTool (repeatable)")
	f.BoolVar(&c.Stream, "agent-stream", false, "ask the model for streamed replies")
	f.StringVar(&c.TranscribeModel, "transcribe-model", "whisper-1", "speech-to-text model of the endpoint, for lumen talk")
	f.StringVar(&c.SpeechModel, "speech-model", "tts-1", "text-to-speech model of the endpoint; espeak: the local espeak-ng only (also the fallback)")
	f.StringVar(&c.Voice, "voice", "alloy", "voice of the endpoint's speech")
}

// mergeAgent takes the file's agent settings under explicit flags.
func mergeAgent(set func(string) bool, c *AgentConfig, file AgentConfig) {
	if !set("openai-base-url") && file.BaseURL != "" {
		c.BaseURL = file.BaseURL
	}
	if !set("model") && file.Model != "" {
		c.Model = file.Model
	}
	if !set("agent-max-turns") && file.MaxTurns > 0 {
		c.MaxTurns = file.MaxTurns
	}
	if !set("agent-timeout") && file.Timeout > 0 {
		c.Timeout = file.Timeout
	}
	if !set("agent-forbid") && len(file.Forbid) > 0 {
		c.Forbid = file.Forbid
	}
	if !set("agent-stream") && file.Stream {
		c.Stream = true
	}
	if !set("transcribe-model") && file.TranscribeModel != "" {
		c.TranscribeModel = file.TranscribeModel
	}
	if !set("speech-model") && file.SpeechModel != "" {
		c.SpeechModel = file.SpeechModel
	}
	if !set("voice") && file.Voice != "" {
		c.Voice = file.Voice
	}
}

func (c *AgentConfig) validate() error {
	names := map[string]bool{}
	for _, s := range agent.Specs() {
		names[s.Name] = true
	}
	for _, f := range c.Forbid {
		if !names[f] {
			return fmt.Errorf("--agent-forbid %q: no such agent tool", f)
		}
	}
	if c.MaxTurns <= 0 {
		return fmt.Errorf("--agent-max-turns must be positive, not %d", c.MaxTurns)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("--agent-timeout must be positive, not %v", c.Timeout)
	}
	return nil
}

// model returns the agent's model client, or nil when none is configured.
// With only OPENAI_API_KEY set, OpenAI's gpt-4o-mini is meant.
func (c *AgentConfig) model() *agent.OpenAI {
	model := c.Model
	if model == "" && c.BaseURL == "" && c.apiKey != "" {
		model = "gpt-4o-mini"
	}
	mc := agent.ModelConfig{BaseURL: c.BaseURL, APIKey: c.apiKey, Model: model, Stream: c.Stream,
		Voice: agent.VoiceConfig{TranscribeModel: c.TranscribeModel, SpeechModel: c.SpeechModel, Voice: c.Voice}}
	if !mc.Configured() {
		return nil
	}
	return agent.NewOpenAI(mc)
}

// voice returns the speech-to-text and text-to-speech of the agent.
func (c *AgentConfig) voice(model *agent.OpenAI, logf func(string, ...any)) (agent.Transcriber, agent.Speaker) {
	speaker := agent.Fallback{Secondary: agent.Espeak{}, Logf: logf}
	if model == nil {
		return nil, speaker
	}
	if c.SpeechModel != "espeak" {
		speaker.Primary = model
	}
	return model, speaker
}

// startAgent spawns a light's agent and adds its verbs to the service.
func (m *Main) startAgent(svc micro.Service, nc *nats.Conn, j *journal.Journal, root *actor.PID, name string, model *agent.OpenAI) error {
	c := m.Config.Agent
	tools := &agent.Tools{Light: wire.New(nc).Light(name), Forbidden: slices.Clone(c.Forbid)}
	cfg := agent.Config{Light: name, Journal: j, Tools: tools, MaxTurns: c.MaxTurns, CallTimeout: c.Timeout, Logf: m.logf}
	if model != nil { // a nil *OpenAI must not become a non-nil Model
		cfg.Model = model
	}
	cfg.Transcriber, cfg.Speaker = c.voice(model, m.logf)
	props, err := agent.Props(cfg)
	if err != nil {
		return err
	}
	pid, err := actors.SpawnChild(m.sys, root, "agent-"+name, props)
	if err != nil {
		return err
	}
	return agent.Serve(svc, m.sys.Root, pid, name)
}
