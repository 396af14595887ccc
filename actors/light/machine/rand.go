package machine

import (
	"hash/fnv"

	"github.com/lumen-home/lumen/internal/splitmix"
)

// inputKey ("lumen.rq") sets the machine's streams apart from the
// renderer's, which are seeded from numbers of the same kind.
const inputKey = 0x6c756d656e2e7271

// inputRand is the stream behind random() and Math.random() for the input
// being applied; where it starts depends on the input only, so a journal
// replays to the same numbers.
type inputRand struct{ splitmix.Rand }

// seed starts the stream of the input with stream sequence seq.
func (r *inputRand) seed(seq uint64) {
	r.Seed(seq ^ inputKey)
}

// rekey moves the stream to a position that depends only on the input and
// on the rule, not on how many numbers the rule drew: used after a rule
// timed out, whose draws are unknown on replay (where it is not run).
func (r *inputRand) rekey(seq uint64, rule string) {
	h := fnv.New64a()
	h.Write([]byte(rule))
	k := splitmix.New(h.Sum64())
	r.Seed(seq ^ inputKey ^ k.Uint64())
}
