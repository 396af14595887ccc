package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/nats/house"
)

// saveRegistry saves the registry and waits for a running hub to take it.
func SaveRegistry(ctx context.Context, data string, reg *house.Registry) error {
	if err := reg.Save(data); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return house.WaitApplied(ctx, data, reg.Generation)
}

// ago is a time and how long ago it was.
func Ago(t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return fmt.Sprintf("%s (%s ago)", t.Local().Format("15:04:05"), time.Since(t).Round(time.Second))
}
