package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
)

// ModelConfig says which OpenAI-compatible endpoint to use: OpenAI,
// Ollama (http://localhost:11434/v1), llama.cpp's server, Groq …
type ModelConfig struct {
	BaseURL    string // OPENAI_BASE_URL; empty: api.openai.com
	APIKey     string // OPENAI_API_KEY; local servers accept any
	Model      string // LUMEN_MODEL
	Stream     bool   // ask for a streamed reply (some servers answer tools only so)
	MaxRetries int    // retries of a failed call (429, 5xx, connection); default 1
	Voice      VoiceConfig
}

// Configured reports whether a model can be called at all.
func (c ModelConfig) Configured() bool { return c.Model != "" && (c.BaseURL != "" || c.APIKey != "") }

// Unconfigured is the answer to ask when no model is configured.
const Unconfigured = "The agent is not configured: start lumen up with LUMEN_MODEL and OPENAI_BASE_URL (and OPENAI_API_KEY if the endpoint needs one) set, or --model/--openai-base-url; for example OPENAI_BASE_URL=http://localhost:11434/v1 LUMEN_MODEL=llama3.1 for Ollama."

// OpenAI is a Model speaking the chat completions API with openai-go.
type OpenAI struct {
	client openai.Client
	cfg    ModelConfig

	mu      sync.Mutex
	tools   []openai.ChatCompletionToolUnionParam
	toolsOf []Spec
}

// NewOpenAI returns a model client. It does not call the endpoint.
func NewOpenAI(cfg ModelConfig, opts ...option.RequestOption) *OpenAI {
	retries := cfg.MaxRetries
	if retries == 0 {
		retries = 1
	}
	if retries < 0 {
		retries = 0
	}
	o := []option.RequestOption{option.WithMaxRetries(retries)}
	if cfg.BaseURL != "" {
		o = append(o, option.WithBaseURL(cfg.BaseURL))
	}
	key := cfg.APIKey
	if key == "" {
		key = "none" // local servers ignore it; the client refuses an empty one
	}
	o = append(o, option.WithAPIKey(key))
	return &OpenAI{client: openai.NewClient(append(o, opts...)...), cfg: cfg}
}

// Client is the underlying openai-go client (for audio).
func (o *OpenAI) Client() *openai.Client { return &o.client }

// Complete runs one chat completion.
func (o *OpenAI) Complete(ctx context.Context, req Request) (messages.AgentMessage, error) {
	tools, err := o.toolParams(req.Tools)
	if err != nil {
		return messages.AgentMessage{}, err
	}
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(o.cfg.Model), Messages: toParams(req), Tools: tools}
	var msg openai.ChatCompletionMessage
	if o.cfg.Stream {
		stream := o.client.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			return messages.AgentMessage{}, apiErr(err)
		}
		if len(acc.Choices) == 0 {
			return messages.AgentMessage{}, errors.New("agent: the model's stream had no choice")
		}
		msg = acc.Choices[0].Message
	} else {
		res, err := o.client.Chat.Completions.New(ctx, params)
		if err != nil {
			return messages.AgentMessage{}, apiErr(err)
		}
		if len(res.Choices) == 0 {
			return messages.AgentMessage{}, errors.New("agent: the model's reply had no choice")
		}
		msg = res.Choices[0].Message
	}
	out := messages.AgentMessage{Role: "assistant", Content: msg.Content}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		out.ToolCalls = append(out.ToolCalls, messages.AgentToolCall{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
	}
	return out, nil
}

// toolParams converts the tools, once per distinct list (the loop sends
// the same list every turn).
func (o *OpenAI) toolParams(specs []Spec) ([]openai.ChatCompletionToolUnionParam, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tools != nil && slices.Equal(o.toolsOf, specs) {
		return o.tools, nil
	}
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(specs))
	for _, t := range specs {
		var schema map[string]any
		if err := json.Unmarshal([]byte(t.Schema), &schema); err != nil {
			return nil, fmt.Errorf("agent: schema of %s: %w", t.Name, err)
		}
		out = append(out, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(schema),
		}))
	}
	o.tools, o.toolsOf = out, slices.Clone(specs)
	return out, nil
}

// apiErr turns openai-go's HTTP error into an APIError.
func apiErr(err error) error {
	var e *openai.Error
	if errors.As(err, &e) {
		msg := e.Message
		if msg == "" {
			msg = strings.TrimSpace(e.RawJSON())
		}
		return &APIError{Status: e.StatusCode, Message: clip.To(msg, 300, " …")}
	}
	return fmt.Errorf("agent: model call: %w", err)
}

// toParams converts the conversation to openai-go's message params.
func toParams(req Request) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			out = append(out, openai.UserMessage(m.Content))
		case "tool":
			out = append(out, openai.ToolMessage(m.Content, m.ToolCallID))
		case "assistant":
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, tc := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Args},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}
