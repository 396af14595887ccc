package house

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/redact"
	"github.com/lumen-home/lumen/nats/subject"
)

// NoLights says why no light answers at the server at where (its URL,
// printed redacted): a hub has lights only while their Pis are
// connected, and elsewhere no lumen up runs.
func NoLights(ctx context.Context, js jetstream.JetStream, where string) error {
	where = redact.URLs(where)
	if js == nil || !isHub(ctx, js) {
		return fmt.Errorf("no light is running at %s; start one with 'lumen up'", where)
	}
	owners, err := readOwners(ctx, js)
	if err != nil || len(owners) == 0 {
		return fmt.Errorf("%s is a hub, and no Pi has joined its house yet: register one with 'lumen hub pi add NAME --light LIGHT --out NAME.creds' on the hub, then on the Pi: lumen up --hub URL --creds NAME.creds", where)
	}
	pis := slices.Sorted(maps.Keys(invert(owners)))
	return fmt.Errorf("%s is a hub, and none of its Pis (%s) is connected: their lights (%s) answer once they are; 'lumen hub pi ls' on the hub says since when each is away",
		where, strings.Join(pis, ", "), strings.Join(slices.Sorted(maps.Keys(owners)), ", "))
}

// isHub reports whether js is a hub's: it has the house stream and no
// light's journal.
func isHub(ctx context.Context, js jetstream.JetStream) bool {
	if ok, err := reaches(ctx, js, subject.Stream); ok || err != nil {
		return false
	}
	ok, _ := reaches(ctx, js, Stream)
	return ok
}

// invert maps each Pi to one of its lights.
func invert(owners map[string]string) map[string]string {
	pis := make(map[string]string, len(owners))
	for light, pi := range owners {
		pis[pi] = light
	}
	return pis
}
