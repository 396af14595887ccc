package datasource

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
)

// PrevSuffix names the variable that keeps a stored variable's previous
// value: temperature_prev for temperature. The light sets it when it
// applies a run (the data input), from the value it has then, so that the
// run is applied as a whole and _prev is never stale.
const PrevSuffix = "_prev"

// Values returns what result gives each variable of def's store, by
// variable: the body of one run of the source (the light's data input).
// If any path cannot be read, or reads null, it returns no value at all
// and an error naming every variable that failed: the light keeps its
// last known values.
func Values(def Def, result json.RawMessage) (map[string]json.RawMessage, error) {
	store := def.storeOf()
	out := make(map[string]json.RawMessage, len(store))
	var failed []string
	for _, name := range slices.Sorted(maps.Keys(store)) {
		p, err := ParsePath(store[name])
		var v json.RawMessage
		if err == nil {
			v, err = p.Extract(result)
		}
		if err == nil && string(v) == "null" {
			err = errorf(CodeBadResult, "%s is null", p)
		}
		if err != nil {
			msg := err.Error()
			if e := (*Error)(nil); errors.As(err, &e) {
				msg = e.Msg
			}
			failed = append(failed, name+": "+msg)
			continue
		}
		out[name] = v
	}
	if len(failed) > 0 {
		return nil, errorf(CodeBadResult, "source %q could not store %s; the last values are kept. Fix the store paths or the tool's result", def.Name, strings.Join(failed, "; "))
	}
	return out, nil
}
