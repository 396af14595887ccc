package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// newFunction is lumen function: a light's custom functions, which its
// rules' conditions and actions and its states' colors call by name.
func newFunction(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "function",
		Short: "Define, list and delete a light's custom functions, which its rules and colors call by name",
		Long: `Custom functions are JavaScript of the light's own: each is the body of a
function of its params, and every rule condition, action and state color of
the light may call it by name (is_evening() in a condition). A call runs
inside the expression that makes it, with its time and memory bounds and its
random() and now(); only actions may setData or startTimer through one.
Definitions are journaled with the light's configuration.`,
		Example: `  lumen function define is_evening --code 'return new Date(now()).getHours() >= 18;' --description 'true from 18:00'
  lumen rule add off button_click blue --if 'is_evening()' --priority 1
  lumen function ls
  lumen function rm is_evening`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var (
		f                messages.Function
		params           []string
		codeFile, defsIn string
	)
	define := mutation(a, &cobra.Command{
		Use:   "define NAME --code CODE | define -f FILE",
		Short: "Define (or replace) a function",
		Long: `Define a function NAME from --code (or --code-file, - for standard input)
with --params, its parameters in order. Or define one or several from a YAML
or JSON file (-f): {name, description, params, code}, or {"functions":[…]}.
The code is syntax-checked, and every rule and color that calls the function
is checked against it again; an error names the line and column, or the
rule. Replacing a function keeps its place.`,
		Example: `  lumen function define is_evening --params h --code 'return (h ?? new Date(now()).getHours()) >= 18;'
  lumen function define mix --params a,b --code-file mix.js --description 'the mean of a and b'
  lumen function define -f functions.yaml`,
		Args: args(cobra.MaximumNArgs(1)),
	}, messages.VerbDefineFunction, func(argv []string) (any, error) {
		if defsIn != "" {
			if len(argv) > 0 || f.Code != "" || codeFile != "" || len(params) > 0 || f.Description != "" {
				return nil, cli.Usage(errors.New("-f FILE holds the whole definition; give no NAME, --code, --params or --description with it"))
			}
			_, body, err := a.ReadFile(defsIn)
			if errors.As(err, new(cli.BadFile)) {
				return nil, cli.Usage(err)
			}
			return json.RawMessage(body), err
		}
		if len(argv) == 0 {
			return nil, cli.Usage(errors.New("name the function (lumen function define NAME --code CODE), or give -f FILE"))
		}
		def := f
		def.Name = argv[0]
		for _, p := range params {
			if p = strings.TrimSpace(p); p != "" {
				def.Params = append(def.Params, p)
			}
		}
		switch {
		case def.Code != "" && codeFile != "":
			return nil, cli.Usage(errors.New("give --code or --code-file, not both"))
		case codeFile == "-":
			b, err := io.ReadAll(a.Stdin)
			if err != nil {
				return nil, err
			}
			def.Code = string(b)
		case codeFile != "":
			b, err := os.ReadFile(codeFile)
			if err != nil {
				return nil, err
			}
			def.Code = string(b)
		case def.Code == "":
			return nil, cli.Usage(errors.New("give the function's body with --code or --code-file"))
		}
		return def, nil
	})
	fl := define.Flags()
	fl.StringVar(&f.Code, "code", "", "the function's body: JavaScript, with return giving the value")
	fl.StringVar(&codeFile, "code-file", "", "read the body from this file (- for standard input)")
	fl.StringSliceVar(&params, "params", nil, "its parameters, in order (comma-separated or repeated)")
	fl.StringVar(&f.Description, "description", "", "what it does, for people and the agent")
	fl.StringVarP(&defsIn, "file", "f", "", "define from a YAML or JSON file instead")
	ls := newListing(a, "ls", "List the light's functions: call, description, first line of code", func(g messages.GetReply) error {
		if len(g.Functions) == 0 {
			_, err := fmt.Fprintf(a.Stdout, "light %s has no functions\n", a.Light)
			return err
		}
		return describe.Functions(a.Stdout, g.Functions)
	})
	rm := mutation(a, &cobra.Command{
		Use:     "rm NAME",
		Short:   "Delete a function (refused while a rule, color or function calls it)",
		Example: `  lumen function rm is_evening`,
		Args:    args(cobra.ExactArgs(1)),
	}, messages.VerbDeleteFunction, func(argv []string) (any, error) {
		return messages.NameRequest{Name: argv[0]}, nil
	})
	cmd.AddCommand(define, ls, rm)
	return cmd
}
