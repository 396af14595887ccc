package messages

import "encoding/json"

// Verbs of data sources.
const (
	VerbCreateSource = "create_source" // a source definition (plugins/source.Def)
	VerbDeleteSource = "delete_source" // NameRequest
	VerbListSources  = "list_sources"  // {} → SourcesReply
)

// Configuration ops of data sources (InConfigData.Op).
const (
	OpCreateSource = "create_source" // add or replace Sources
	OpDeleteSource = "delete_source" // delete source Name
)

// A source definition travels as the canonical JSON of plugins/source.Def
// (this package cannot import it): {"name","type","interval_ms","fetch":
// {"tool","args"},"store":{var: path},"fires"}.

// SourcesReply answers list_sources with the definitions in definition
// order.
type SourcesReply struct {
	OK      bool              `json:"ok"`
	Sources []json.RawMessage `json:"sources"`
}
