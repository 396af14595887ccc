package phrase_test

import (
	"errors"
	"testing"

	"github.com/lumen-home/lumen/agent/phrase"
)

func TestNormal(t *testing.T) {
	tests := []struct{ given, want string }{
		{"Make it cosy please!", "cosy"},
		{"make it cosy", "cosy"},
		{"  COSY.  ", "cosy"},
		{"I'm going to read a book", "i'm going read book"},
		{"'party' mode", "party"},
		{"party_mode", "party_mode"},
		{"please", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got := phrase.Normal(tt.given)
		if got != tt.want {
			t.Errorf("Normal(%q) = %q, want %q", tt.given, got, tt.want)
		}
		if again := phrase.Normal(got); again != got {
			t.Errorf("Normal(%q) = %q: not a normal form", got, again)
		}
	}
}

func TestLearnable(t *testing.T) {
	tests := []struct {
		given, want string // want "": not learnable
	}{
		{"I'm going to read a book", "i'm going read book"},
		{"Make it cosy please!", "cosy"},
		{"movie night", "movie night"},
		{"go back", ""},
		{"do that again", ""},
		{"undo", ""},
		{"red for 10 minutes", ""},
		{"red until dinner", ""},
		{"red then blue", ""},
		{"make it like this", ""},
		{"red when it rains", ""},
		{"3 blinks", ""},
		{"one two three four five six seven eight nine ten eleven twelve thirteen", ""},
		{"please", ""},
	}
	for _, tt := range tests {
		got, err := phrase.Learnable(tt.given)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("Learnable(%q) = %q; it must not be learned", tt.given, got)
		case tt.want != "" && (err != nil || got != tt.want):
			t.Errorf("Learnable(%q) = %q, %v; want %q", tt.given, got, err, tt.want)
		}
	}
	if _, err := phrase.Learnable("please thank you"); !errors.Is(err, phrase.ErrEmpty) {
		t.Errorf("only fillers: %v", err)
	}
}
