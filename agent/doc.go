// Package agent will hold the agent session actor: the openai-go tool loop,
// the pattern library and voice (issue: agent session actor).
package agent
