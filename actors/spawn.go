package actors

import (
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// SpawnNamed spawns a child of ctx named name, or name.2, name.3 … while
// a child of that name is still stopping: a parent that replaces a
// child stops the old one, which is gone only later, and the new one
// must start now all the same.
func SpawnNamed(ctx actor.Context, props *actor.Props, name string) (*actor.PID, error) {
	try := name
	for gen := 2; ; gen++ {
		pid, err := ctx.SpawnNamed(props, try)
		if !errors.Is(err, actor.ErrNameExists) || gen > 1000 {
			return pid, err
		}
		try = fmt.Sprintf("%s.%d", name, gen)
	}
}
