package docgen

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestAnchor(t *testing.T) {
	for _, tc := range []struct{ given, want string }{
		{"lumen hub pi add", "lumen-hub-pi-add"},
		{"The house: many Pis, one hub", "the-house-many-pis-one-hub"},
		{"`--sync batch`: what a power cut loses", "--sync-batch-what-a-power-cut-loses"},
	} {
		if got := Anchor(tc.given); got != tc.want {
			t.Errorf("Anchor(%q) = %q, want %q", tc.given, got, tc.want)
		}
	}
}

func TestIndentedHelpIsFenced(t *testing.T) {
	got := indentCode("Intro:\n\n  a: 1\n  b: 2\n\nAfter.")
	want := "Intro:\n\n```\n  a: 1\n  b: 2\n```\n\nAfter."
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

type sample struct {
	Listen string `yaml:"listen"`
	Inner  struct {
		Gamma float64 `yaml:"gamma" doc:"the gamma"`
		Bare  int     `yaml:"bare"`
	} `yaml:"inner"`
	Skipped string `yaml:"-"`
}

func TestKeysNeedAFlagOrADoc(t *testing.T) {
	fs := pflag.NewFlagSet("up", pflag.ContinueOnError)
	fs.String("listen", "127.0.0.1:4222", "where to listen")
	keys, err := Keys(sample{}, fs, map[string]string{"listen": "listen"})
	if err == nil || !strings.Contains(err.Error(), "inner.bare") {
		t.Fatalf("a key with no flag and no doc: %v", err)
	}
	if len(keys) != 3 || keys[0] != (Key{Path: "listen", Type: "string", Default: "127.0.0.1:4222", Flag: "--listen", Doc: "where to listen"}) ||
		keys[1].Path != "inner.gamma" || keys[1].Doc != "the gamma" || keys[1].Type != "number" {
		t.Errorf("keys: %+v", keys)
	}
}

func TestCLILeavesOutHiddenCommands(t *testing.T) {
	root := &cobra.Command{Use: "lumen", Long: "The light."}
	root.AddCommand(&cobra.Command{Use: "fire T", Short: "Fire", Run: func(*cobra.Command, []string) {}},
		&cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}})
	doc := string(CLI(root))
	if !strings.Contains(doc, "## lumen fire\n") || !strings.Contains(doc, "[`lumen fire`](#lumen-fire)") || strings.Contains(doc, "secret") {
		t.Errorf("reference:\n%s", doc)
	}
}
