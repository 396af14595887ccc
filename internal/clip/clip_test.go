package clip_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lumen-home/lumen/internal/clip"
)

func TestTo(t *testing.T) {
	type in struct {
		s    string
		n    int
		tail string
	}
	tests := []struct {
		name  string
		given in
		want  string
	}{
		{"short enough", in{"hello", 5, "…"}, "hello"},
		{"empty", in{"", 0, "…"}, ""},
		{"cut", in{"hello world", 5, "…"}, "hello…"},
		{"tail with a space", in{"hello world", 5, " …"}, "hello …"},
		{"cut to nothing", in{"hello", 0, "…"}, "…"},
		{"negative n is nothing", in{"hello", -3, "…"}, "…"},
		{"two-byte character at the cut", in{"héllo", 2, "…"}, "h…"},
		{"two-byte character just fits", in{"héllo", 3, "…"}, "hé…"},
		{"three-byte character at the cut", in{"a€b", 2, "…"}, "a…"},
		{"three-byte character, one byte in", in{"a€b", 3, "…"}, "a…"},
		{"three-byte character just fits", in{"a€b", 4, "…"}, "a€…"},
		{"four-byte character at the cut", in{"ok🙂", 5, "…"}, "ok…"},
		{"only a multi-byte character", in{"🙂🙂", 3, "…"}, "…"},
		{"exactly n bytes", in{"aaa", 3, "…"}, "aaa"},
		{"exactly n bytes of multi-byte text", in{"日本", 6, "…"}, "日本"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clip.To(tt.given.s, tt.given.n, tt.given.tail)
			if got != tt.want {
				t.Errorf("To(%q, %d, %q) = %q, want %q", tt.given.s, tt.given.n, tt.given.tail, got, tt.want)
			}
			if utf8.ValidString(tt.given.s) && !utf8.ValidString(got) {
				t.Errorf("To(%q, %d, %q) = %q cuts a character", tt.given.s, tt.given.n, tt.given.tail, got)
			}
		})
	}
}

func TestLine(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  string // clipped to 10 bytes with "…"
	}{
		{"one line already", "a b", "a b"},
		{"runs of white space", "  a \n\t b  ", "a b"},
		{"collapsed, then cut", "one\n\ntwo three", "one two th…"},
		{"collapsed, then cut before a character", "ab  cd  eéé  x", "ab cd eé…"},
		{"only white space", " \n ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clip.Line(tt.given, 10, "…"); got != tt.want {
				t.Errorf("Line(%q) = %q, want %q", tt.given, got, tt.want)
			}
		})
	}
}

// TestToNeverCuts clips every prefix length of mixed text.
func TestToNeverCuts(t *testing.T) {
	s := strings.Repeat("aé€🙂", 4)
	for n := 0; n <= len(s); n++ {
		got := strings.TrimSuffix(clip.To(s, n, "…"), "…")
		if !utf8.ValidString(got) || len(got) > n || !strings.HasPrefix(s, got) || n-len(got) > 3 {
			t.Fatalf("To(s, %d) = %q", n, got)
		}
	}
}
