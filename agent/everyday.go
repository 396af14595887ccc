package agent

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
)

// The corpus the local understanding is tuned on, and the house it
// speaks to, for lumen eval --everyday: the test data is the one copy.

//go:embed testdata/understand/corpus.txt
var everydayCorpus []byte

//go:embed testdata/understand/world.json
var everydayWorld []byte

// EverydayCorpus is the tuning corpus of everyday commands, one
// "SENTENCE => EXPECTATION" a line, all said to EverydayHouse's light.
func EverydayCorpus() []byte { return slices.Clone(everydayCorpus) }

// EverydayHouse is the house the everyday corpora speak to: the light
// they are said to and every light with its room, aliases, groups and
// states.
func EverydayHouse() (saidTo string, lights []Named, err error) {
	var w struct {
		SaidTo string  `json:"said_to"`
		Lights []Named `json:"lights"`
	}
	if err := json.Unmarshal(everydayWorld, &w); err != nil {
		return "", nil, fmt.Errorf("agent: the everyday house: %w", err)
	}
	return w.SaidTo, w.Lights, nil
}
