package main

import (
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
)

func newNames(a *app) *cobra.Command {
	var (
		f    cli.NamesFlags
		room string
	)
	cmd := &cobra.Command{
		Use:   "names",
		Short: "Show or set the names people call a light by: its room and its aliases",
		Long: `Show the light's room and aliases, or set them: the names an everyday
command may call it by, besides its own name (lumen ask "turn off the
bedside", the page, a voice). A room names all its lights at once ("turn
off the bedroom"); an alias names this light. Names are letters, digits, spaces,
'-', '_' and apostrophes, up to 40 characters, kept lower-case; a light has
at most 16 aliases.

--room replaces the room (--room "" clears it); --alias, repeated, replaces
every alias (--no-aliases clears them); what a flag does not give stays.
Each change is journaled: lumen history shows it, lumen rollback undoes it.
names: in lumen.yaml sets them at each start, over a change made here.`,
		Example: `  lumen names                                   # prints its room and aliases
  lumen names --room bedroom --alias "bedroom lamp" --alias bedside
  lumen ask "turn off the bedside"              # now finds this light
  lumen names --room ""                         # no room
  lumen names --no-aliases --light hall`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("room") {
				f.Room = &room
			}
			f.AliasSet = cmd.Flags().Changed("alias")
			return a.Names(cmd.Context(), f)
		},
	}
	cmd.Flags().StringVar(&room, "room", "", `the room the light is in, e.g. bedroom ("" clears it)`)
	cmd.Flags().StringArrayVar(&f.Aliases, "alias", nil, "a NAME people call this light by; repeat for several (they replace the aliases it has)")
	cmd.Flags().BoolVar(&f.NoAliases, "no-aliases", false, "clear the light's aliases")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
