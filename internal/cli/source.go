package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/wire"
)

// SourceFlags are the flags of `lumen source add` that build a definition
// without a file.
type SourceFlags struct {
	File     string
	Interval Duration
	Parts    datasource.Parts
	Replace  bool
}

// definition returns the body of create_source: the file's, or one built
// from the flags. The light validates it; only how the command was called
// is checked here.
func (f *SourceFlags) definition(cmd *cobra.Command, argv []string, t *Term) ([]byte, error) {
	if f.File != "" {
		var set []string
		for _, name := range []string{"type", "interval", "tool", "args", "store", "fires", "tracks", "subject", "topic", "token"} {
			if cmd.Flags().Changed(name) {
				set = append(set, "--"+name)
			}
		}
		if len(set) > 0 || len(argv) > 0 {
			return nil, Usage(fmt.Errorf("-f FILE gives the whole definition; drop %s", strings.Join(append(argv, set...), " ")))
		}
		_, body, err := t.ReadFile(f.File)
		if errors.As(err, new(BadFile)) {
			return nil, Usage(err)
		}
		return body, err
	}
	if len(argv) == 0 {
		return nil, Usage(errors.New("name the source (lumen source add NAME --tool … --interval … --store VAR=PATH), or give -f FILE"))
	}
	f.Parts.Name = argv[0]
	f.Parts.Interval = time.Duration(f.Interval)
	body, err := f.Parts.JSON()
	if err != nil {
		return nil, Usage(err)
	}
	return body, nil
}

// noSource refuses to add a source whose name the light has already:
// replacing one is said with --replace.
func (t *Term) noSource(ctx context.Context, body []byte) error {
	var d struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(body, &d) != nil || d.Name == "" {
		return nil // the light says what is wrong with it
	}
	r, err := Call(ctx, t, messages.VerbListSources, wire.Light.Sources)
	if err != nil {
		return err
	}
	for _, raw := range r.Sources {
		var s struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &s) == nil && s.Name == d.Name {
			return fmt.Errorf("light %s has a source named %s already: add --replace to replace it, or 'lumen source rm %s' first", t.Light, d.Name, d.Name)
		}
	}
	return nil
}

// AddSource adds the source the flags f (or its file) define.
func (t *Term) AddSource(ctx context.Context, cmd *cobra.Command, argv []string, f SourceFlags) error {
	body, err := f.definition(cmd, argv, t)
	if err != nil {
		return err
	}
	if !f.Replace {
		if err := t.noSource(ctx, body); err != nil {
			return err
		}
	}
	return t.Mutate(ctx, messages.VerbCreateSource, body)
}

// ListSources prints the light's data sources.
func (t *Term) ListSources(ctx context.Context) error {
	var r messages.SourcesReply
	if raw, err := t.Query(ctx, messages.VerbListSources, nil, &r); raw || err != nil {
		return err
	}
	if len(r.Sources) == 0 {
		fmt.Fprintln(t.Stdout, describe.NoSources(t.Light))
	}
	now := time.Now()
	for _, raw := range r.Sources {
		fmt.Fprintln(t.Stdout, describe.Source(raw, r, now))
	}
	return nil
}
