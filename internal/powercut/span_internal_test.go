package powercut

import (
	"slices"
	"testing"
)

func TestAddSpan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spans []span
		add   span
		want  []span
	}{
		{"first", nil, span{0, 5}, []span{{0, 5}}},
		{"empty", []span{{0, 5}}, span{7, 7}, []span{{0, 5}}},
		{"append, touching", []span{{0, 5}}, span{5, 9}, []span{{0, 9}}},
		{"append, apart", []span{{0, 5}}, span{6, 9}, []span{{0, 5}, {6, 9}}},
		{"before all", []span{{4, 5}, {8, 9}}, span{0, 2}, []span{{0, 2}, {4, 5}, {8, 9}}},
		{"between", []span{{0, 2}, {8, 9}}, span{4, 5}, []span{{0, 2}, {4, 5}, {8, 9}}},
		{"bridging", []span{{0, 2}, {4, 5}, {8, 9}}, span{1, 8}, []span{{0, 9}}},
		{"inside", []span{{0, 10}}, span{3, 4}, []span{{0, 10}}},
		{"covering", []span{{2, 3}, {5, 6}}, span{0, 10}, []span{{0, 10}}},
		{"overlapping the first", []span{{2, 4}, {8, 9}}, span{0, 3}, []span{{0, 4}, {8, 9}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := addSpan(slices.Clone(tc.spans), tc.add); !slices.Equal(got, tc.want) {
				t.Fatalf("addSpan(%v, %v) = %v, want %v", tc.spans, tc.add, got, tc.want)
			}
		})
	}
}
