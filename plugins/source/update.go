package source

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/lumen-home/lumen/messages"
)

// PrevSuffix names the variable that keeps a stored variable's previous
// value: temperature_prev for temperature.
const PrevSuffix = "_prev"

// VarUpdate sets one variable of the light.
type VarUpdate struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// Input returns the update as the light's var input.
func (u VarUpdate) Input() messages.InVarData {
	return messages.InVarData{Name: u.Name, Value: u.Value}
}

// Updates returns the variable updates that result makes under def's
// store, given the light's current variables. For each stored variable v,
// by name, it sets v_prev to v's current value (when v has one), then v to
// the value at its path. If any path cannot be read, or reads null, it
// returns no update at all and an error naming every variable that failed:
// the light keeps its last known values.
func Updates(def Def, result json.RawMessage, current map[string]json.RawMessage) ([]VarUpdate, error) {
	store := def.storeOf()
	names := slices.Sorted(maps.Keys(store))
	values := make([]json.RawMessage, len(names))
	var failed []string
	for i, name := range names {
		p, err := ParsePath(store[name])
		if err == nil {
			values[i], err = p.Extract(result)
		}
		if err == nil && string(values[i]) == "null" {
			err = errorf(CodeBadResult, "%s is null", p)
		}
		if err != nil {
			msg := err.Error()
			if e := (*Error)(nil); errors.As(err, &e) {
				msg = e.Msg
			}
			failed = append(failed, name+": "+msg)
		}
	}
	if len(failed) > 0 {
		return nil, errorf(CodeBadResult, "source %q could not store %s; the last values are kept. Fix the store paths or the tool's result", def.Name, strings.Join(failed, "; "))
	}
	sets := make([]VarUpdate, 0, 2*len(names))
	for i, name := range names {
		if cur, ok := current[name]; ok && cur != nil {
			sets = append(sets, VarUpdate{Name: name + PrevSuffix, Value: cur})
		}
		sets = append(sets, VarUpdate{Name: name, Value: values[i]})
	}
	return sets, nil
}
