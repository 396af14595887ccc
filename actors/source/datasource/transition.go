package datasource

import (
	"bytes"
	"encoding/json"
)

// Truthy reports whether a predicate's result is true the way JavaScript
// sees it: false, null, 0, "" (and no result) are false; every other
// value, {} and [] included, is true.
func Truthy(result json.RawMessage) bool {
	b := bytes.TrimSpace(result)
	switch {
	case len(b) == 0, string(b) == "false", string(b) == "null", string(b) == `""`:
		return false
	case b[0] == '-' || b[0] >= '0' && b[0] <= '9':
		var f float64
		return json.Unmarshal(b, &f) == nil && f != 0
	}
	return true
}

// Edge reports whether a custom transition fires when its predicate,
// last seen as prev (nil: never seen since the start), is now now: only
// on a change from false to true. The first result after a start sets the
// baseline and never fires, so a restart while the predicate holds does
// not fire it a second time.
func Edge(prev *bool, now bool) bool {
	return prev != nil && !*prev && now
}
