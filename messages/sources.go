package messages

import (
	"encoding/json"
	"time"
)

// Verbs of data sources.
const (
	VerbCreateSource = "create_source" // a source definition (datasource.Def)
	VerbDeleteSource = "delete_source" // NameRequest
	VerbListSources  = "list_sources"  // {} → SourcesReply
	// VerbData journals one run of a source (InDataData) as the input
	// evt.in.data and replies like any mutation. The source actors send
	// it; a person may too, to test rules with a made-up result.
	VerbData = "data"
)

// Configuration ops of data sources (InConfigData.Op).
const (
	OpCreateSource = "create_source" // add or replace Sources
	OpDeleteSource = "delete_source" // delete source Name
)

// Verbs and ops of custom transitions (seed 000 §3). A custom transition
// is a predicate tool and a source of type "transition" that polls it,
// both named after the transition and defined or deleted together.
const (
	VerbDefineTransition = "define_transition" // TransitionRequest
	VerbDeleteTransition = "delete_transition" // NameRequest
	OpDefineTransition   = "define_transition" // add or replace Tools[0] and Sources[0] together
	OpDeleteTransition   = "delete_transition" // delete the transition Name: its source and its tool
)

// TransitionRequest is the body of define_transition: fire Name each time
// Code, the body of an async JavaScript function run in the tool sandbox
// every PollIntervalMs, returns a truthy value after a falsy one. Hosts
// are the hosts its fetch may reach, as for a tool.
type TransitionRequest struct {
	Name           string   `json:"name"`
	Description    string   `json:"description,omitempty"`
	Code           string   `json:"code"`
	PollIntervalMs int      `json:"poll_interval_ms"`
	Hosts          []string `json:"hosts,omitempty"`
}

// A source definition travels as the canonical JSON of datasource.Def
// (this package cannot import it): {"name","type","interval_ms","fetch":
// {"tool","args"},"store":{var: path},"fires"}.

// SourcesReply answers list_sources with the definitions in definition
// order, and when each source last stored a run (omitted when none has).
type SourcesReply struct {
	OK       bool                 `json:"ok"`
	Sources  []json.RawMessage    `json:"sources"`
	LastRuns map[string]time.Time `json:"last_runs,omitempty"`
	// WebhookURLs: each webhook source's URL on the daemon's HTTP port
	// (POST), by name; omitted when there is none, or no --http.
	WebhookURLs map[string]string `json:"webhook_urls,omitempty"`
}
