package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

func newTool(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tool",
		Short: "Define, run, list and delete a light's custom tools",
		Long: `Custom tools are JavaScript run in a sandbox (Wasmtime): the code is the
body of an async function of params that returns JSON, and may only reach
the hosts it declares with fetch (HTTPS; LAN addresses only when
'lumen up --allow-net' lists them). Definitions are journaled with the
light's configuration.`,
		Example: `  lumen tool define -f weather.yaml
  lumen tool run weather --args '{"city":"Paris"}'
  lumen tool ls
  lumen tool rm weather`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	define := &cobra.Command{
		Use:   "define -f FILE",
		Short: "Define (or replace) tools from a YAML or JSON file",
		Long: `Define a tool, or several ({"tools":[…]}), from a file with the fields
name, description, params (JSON schema), code, returns, hosts. The code is
syntax-checked; an error names its line and column.`,
		Example: `  # weather.yaml
  #   name: weather
  #   hosts: [api.open-meteo.com]
  #   code: |
  #     const r = await fetch("https://api.open-meteo.com/v1/forecast?latitude=48.85&longitude=2.35&current=temperature_2m")
  #     return {temp: (await r.json()).current.temperature_2m}
  lumen tool define -f weather.yaml`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			file, _ := cmd.Flags().GetString("file")
			if file == "" {
				return cli.Usage(fmt.Errorf("-f FILE is required"))
			}
			_, body, err := a.ReadFile(file)
			if errors.As(err, new(cli.BadFile)) {
				return cli.Usage(err)
			}
			if err != nil {
				return err
			}
			return a.Mutate(cmd.Context(), messages.VerbDefineTool, body)
		},
	}
	define.Flags().StringP("file", "f", "", "the tool definition (YAML or JSON)")
	var argsJSON string
	run := &cobra.Command{
		Use:   "run NAME",
		Short: "Run a tool once and print its result",
		Example: `  lumen tool run weather
  lumen tool run price --args '{"coin":"bitcoin"}'`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error { return a.RunTool(cmd.Context(), argv[0], argsJSON) },
	}
	run.Flags().StringVar(&argsJSON, "args", "", "the tool's params, as JSON")
	ls := &cobra.Command{
		Use:     "ls",
		Short:   "List the light's tools: defined, built-in and plugins",
		Example: `  lumen tool ls --light kitchen`,
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var r messages.ToolsReply
			if raw, err := a.Query(cmd.Context(), messages.VerbListTools, nil, &r); raw || err != nil {
				return err
			}
			describe.Tools(a.Stdout, a.Light, r)
			return nil
		},
	}
	rm := &cobra.Command{
		Use:     "rm NAME",
		Short:   "Delete a tool",
		Example: `  lumen tool rm weather`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.Mutate(cmd.Context(), messages.VerbDeleteTool, messages.NameRequest{Name: argv[0]})
		},
	}
	for _, c := range []*cobra.Command{define, run, ls, rm} {
		lightFlag(c, a)
		jsonFlag(c, a)
		cmd.AddCommand(c)
	}
	cmd.AddCommand(newToolPrecompile())
	return cmd
}
