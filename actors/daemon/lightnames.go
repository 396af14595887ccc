package daemon

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// LightNames are the names lumen.yaml gives a light (names:): its room,
// its aliases or both. A key left out keeps what the light has; room ""
// and aliases [] clear them.
type LightNames struct {
	Room    *string   `yaml:"room"`
	Aliases *[]string `yaml:"aliases"`
}

// request is the set_names body of n.
func (n LightNames) request() messages.NamesRequest {
	return messages.NamesRequest{Room: n.Room, Aliases: n.Aliases}
}

// validateNames checks names: against the lights (lights, by name), and
// each light's names as apply checks them. A light is named as a person
// types it: the key becomes its name.
func (c *Config) validateNames(lights map[string]bool) error {
	if len(c.Names) == 0 {
		return nil
	}
	out := make(map[string]LightNames, len(c.Names))
	for _, typed := range slices.Sorted(maps.Keys(c.Names)) {
		n := c.Names[typed]
		l, err := subject.LightName(typed)
		if err != nil {
			return fmt.Errorf("names: %w", err)
		}
		if !lights[l] {
			return fmt.Errorf("names: %s is not one of --light %s; name a light this Pi runs", typed, strings.Join(c.Lights, ", "))
		}
		if _, twice := out[l]; twice {
			return fmt.Errorf("names: light %s is given twice", l)
		}
		if n.Room == nil && n.Aliases == nil {
			return fmt.Errorf("names: %s gives neither room nor aliases; give e.g. {room: bedroom, aliases: [bedroom lamp, bedside]}, or leave it out", typed)
		}
		if _, err := n.request().Input(); err != nil {
			return fmt.Errorf("names: %s: %w", typed, err)
		}
		out[l] = n
	}
	c.Names = out
	return nil
}

// setNames gives light (pid) the names lumen.yaml gives it when its own
// differ, journaled by lumen.yaml like any set_names; names it already
// has journal nothing, so that a restart does not grow the journal.
func (d *Daemon) setNames(pid *actor.PID, name string, n LightNames) error {
	in, err := n.request().Input()
	if err != nil {
		return err // Validate refused it
	}
	g, err := d.modelOf(pid)
	if err != nil {
		return err
	}
	room, aliases, _ := messages.NormalLightNames(in.Room, in.Aliases)
	if (in.KeepRoom || room == g.Room) && (in.KeepAliases || slices.Equal(aliases, g.Aliases)) {
		return nil
	}
	if err := d.input(pid, messages.InConfig, in, messages.WhoConfig); err != nil {
		return err
	}
	d.cfg.Logf("names: %s: %s (from lumen.yaml)", name, namesSaid(in.KeepRoom, room, in.KeepAliases, aliases))
	return nil
}

// namesSaid says what a set_names sets, for the log: "room bedroom,
// aliases bedroom lamp, bedside".
func namesSaid(keepRoom bool, room string, keepAliases bool, aliases []string) string {
	var parts []string
	switch {
	case keepRoom:
	case room == "":
		parts = append(parts, "no room")
	default:
		parts = append(parts, "room "+room)
	}
	switch {
	case keepAliases:
	case len(aliases) == 0:
		parts = append(parts, "no aliases")
	default:
		parts = append(parts, "aliases "+strings.Join(aliases, ", "))
	}
	return strings.Join(parts, ", ")
}
