package machine

// splitmix is the deterministic generator behind random() and
// Math.random(): SplitMix64, chosen because its output is fixed by its
// definition and will never change with a Go release, so a journal
// replays to the same numbers forever.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a number in [0, 1) with 53 random bits.
func (r *splitmix) float() float64 {
	return float64(r.next()>>11) / (1 << 53)
}

// seed starts the stream of the input with stream sequence seq.
func (r *splitmix) seed(seq uint64) {
	r.s = seq ^ 0x6c756d656e2e7271 // "lumen.rq"
}

// rekey moves the stream to a position that depends only on the input and
// on the rule, not on how many numbers the rule drew: used after a rule
// timed out, whose draws are unknown on replay (where it is not run).
func (r *splitmix) rekey(seq uint64, rule string) {
	h := uint64(14695981039346656037) // FNV-1a
	for i := 0; i < len(rule); i++ {
		h ^= uint64(rule[i])
		h *= 1099511628211
	}
	r.s = seq ^ 0x6c756d656e2e7271
	r.s ^= (&splitmix{s: h}).next()
}
