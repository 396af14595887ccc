package daemon

import (
	"fmt"
	"time"

	"github.com/lumen-home/lumen/agent"
)

// AgentConfig configures the agent: the `agent:` key of lumen.yaml, the
// --model… flags, and the usual OpenAI environment variables. The API key
// comes from OPENAI_API_KEY only, never from a flag or the file, so it
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
	// APIKey is $OPENAI_API_KEY.
	APIKey string `yaml:"-"`
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

// ModelName is the model meant: Model, or with only OPENAI_API_KEY set,
// OpenAI's gpt-4o-mini.
func (c *AgentConfig) ModelName() string {
	if c.Model == "" && c.BaseURL == "" && c.APIKey != "" {
		return "gpt-4o-mini"
	}
	return c.Model
}

// model returns the agent's model client, or nil when none is configured.
func (c *AgentConfig) model() *agent.OpenAI {
	mc := agent.ModelConfig{BaseURL: c.BaseURL, APIKey: c.APIKey, Model: c.ModelName(), Stream: c.Stream,
		Voice: agent.VoiceConfig{TranscribeModel: c.TranscribeModel, SpeechModel: c.SpeechModel, Voice: c.Voice}}
	if !mc.Configured() {
		return nil
	}
	return agent.NewOpenAI(mc)
}

// voice returns the speech-to-text and text-to-speech of the agent.
// With an endpoint but no chat model (a speech-to-text server alone, such
// as a local Whisper), spoken requests are transcribed there and
// understood locally, like typed ones.
func (c *AgentConfig) voice(model *agent.OpenAI, logf func(string, ...any)) (agent.Transcriber, agent.Speaker) {
	speaker := agent.Fallback{Secondary: agent.Espeak{}, Logf: logf}
	if model == nil && (c.BaseURL != "" || c.APIKey != "") && c.TranscribeModel != "" {
		model = agent.NewOpenAI(agent.ModelConfig{BaseURL: c.BaseURL, APIKey: c.APIKey,
			Voice: agent.VoiceConfig{TranscribeModel: c.TranscribeModel, SpeechModel: c.SpeechModel, Voice: c.Voice}})
	}
	if model == nil {
		return nil, speaker
	}
	if c.SpeechModel != "espeak" {
		speaker.Primary = model
	}
	return model, speaker
}
