package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// Apply replaces the light's configuration with file's (or with dryRun
// prints what would change), then moves it to state if given.
func (t *Term) Apply(ctx context.Context, file, state string, replaceAll, dryRun bool) error {
	if file == "" {
		return Usage(errors.New("apply needs -f FILE"))
	}
	raw, body, err := t.ReadFile(file)
	if err != nil {
		return err
	}
	if replaceAll {
		body = messages.WithTrue(body, "confirm_empty")
	}
	if state != "" {
		body = messages.WithField(body, "state", state)
	}
	if !dryRun {
		return blame(file, raw, t.Mutate(ctx, messages.VerbApply, body))
	}
	var r messages.DryRunReply
	if printed, err := t.Query(ctx, messages.VerbApply, messages.WithTrue(body, "dry_run"), &r); printed || err != nil {
		return blame(file, raw, err)
	}
	fmt.Fprintln(t.Stdout, describe.DryRun(r.Changes))
	return nil
}

// Export prints the light's configuration (now, or in the past the
// flags give) in format, yaml or json.
func (t *Term) Export(ctx context.Context, format string, past Past) error {
	if format != "yaml" && format != "json" {
		return Usage(fmt.Errorf("--format must be yaml or json"))
	}
	q, err := past.Request()
	if err != nil {
		return err
	}
	g, err := t.getAt(ctx, q)
	if err != nil {
		return err
	}
	if format == "json" {
		out, err := json.MarshalIndent(g.Config(), "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(t.Stdout, "%s\n", out)
		return err
	}
	out, err := messages.ToYAML(g.Config())
	if err != nil {
		return err
	}
	_, err = t.Stdout.Write(out)
	return err
}

// RunTool runs tool name once with argsJSON and prints its result.
func (t *Term) RunTool(ctx context.Context, name, argsJSON string) error {
	req := messages.RunToolRequest{Name: name}
	if argsJSON != "" {
		if !json.Valid([]byte(argsJSON)) {
			return Usage(fmt.Errorf("--args is not JSON: %s", argsJSON))
		}
		req.Args = json.RawMessage(argsJSON)
	}
	var r messages.RunToolReply
	if raw, err := t.Query(ctx, messages.VerbRunTool, req, &r); raw || err != nil {
		return err
	}
	for _, l := range r.Log {
		fmt.Fprintln(t.Stderr, describe.ToolLog(l))
	}
	fmt.Fprintf(t.Stdout, "%s\n", r.Result)
	fmt.Fprintln(t.Stderr, describe.ToolTime(r.Ms))
	return nil
}
