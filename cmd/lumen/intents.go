package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// newIntents is lumen intents: the phrases a light learned from its
// agent's model, and lumen intents rm to forget one.
func newIntents(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "intents",
		Short: "List the requests the light learned to carry out without a model ('lumen intents rm PHRASE' forgets one)",
		Long: `List the light's learned intents. When the agent's model carries out a request
with one setState or fire and nothing else ("I'm going to read a book" → the
state reading), the light learns the request's words, without filler words
and in lowercase, and the same request runs next time with no model call,
even with no model configured. Requests that name a time, a condition or
something said before (back, again, that, for, until, then …) are never
learned; an intent goes when its state or transition is deleted.`,
		Example: `  lumen intents
  lumen intents --json
  lumen intents rm "I'm going to read a book"`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var r messages.IntentsReply
			if raw, err := a.Query(cmd.Context(), messages.VerbIntents, nil, &r); raw || err != nil {
				return err
			}
			if len(r.Intents) == 0 {
				_, err := fmt.Fprintf(a.Stdout, "light %s has learned no intents\n", a.Light)
				return err
			}
			return describe.Intents(a.Stdout, r.Intents)
		},
	}
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	rm := mutation(a, &cobra.Command{
		Use:   "rm PHRASE",
		Short: "Forget a learned intent: the request goes to the model again",
		Long: `Forget a learned intent. PHRASE is matched as the light keeps it: the words
as said work ("Make it cosy, please!" is the phrase cosy), and so do several
arguments, joined by spaces.`,
		Example: `  lumen intents rm "I'm going to read a book"
  lumen intents rm movie night`,
		Args: args(cobra.MinimumNArgs(1)),
	}, messages.VerbDeleteIntent, func(argv []string) (any, error) {
		return messages.DeleteIntentRequest{Phrase: strings.Join(argv, " ")}, nil
	})
	cmd.AddCommand(rm)
	return cmd
}
