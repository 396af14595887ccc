package datasource_test

import (
	"encoding/json"
	"testing"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

func TestTruthy(t *testing.T) {
	for in, want := range map[string]bool{
		"true": true, "false": false, "null": false, "": false, " false ": false,
		"0": false, "0.0": false, "-0": false, "1": true, "-2.5": true, "1e3": true,
		`""`: false, `"no"`: true, `"false"`: true, "{}": true, "[]": true, `{"open":false}`: true,
	} {
		if got := datasource.Truthy(json.RawMessage(in)); got != want {
			t.Errorf("Truthy(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestEdge(t *testing.T) {
	f, tr := false, true
	tests := []struct {
		name string
		prev *bool
		now  bool
		want bool
	}{
		{"first result true: the baseline", nil, true, false},
		{"first result false", nil, false, false},
		{"false to true fires", &f, true, true},
		{"stays true", &tr, true, false},
		{"true to false", &tr, false, false},
		{"stays false", &f, false, false},
	}
	for _, tt := range tests {
		if got := datasource.Edge(tt.prev, tt.now); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
