// Package agent is a light's LLM agent: a manager actor with one actor per
// conversation (session) that runs the tool loop against any
// OpenAI-compatible endpoint (openai-go), calling the light's own commands
// as tools, with the pattern library, permission tiers and approvals, an
// audit trail in the journal, and voice.
//
// Files: manager.go routes asks, approvals and listings to the sessions;
// session.go is a session's actor and its request; loop.go the tool loop;
// tools.go the tools and their tiers; prompt.go and patterns.go what the
// model is told; openai.go and voice.go the endpoint; state.go the fold
// of a session's journaled steps.
package agent
