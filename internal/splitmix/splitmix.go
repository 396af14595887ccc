// Package splitmix is SplitMix64, the deterministic generator behind
// random() in the light machine and the renderer, and behind data sources'
// jitter. Its output is fixed by its definition, not by a library that may
// change with a Go release, so a journal replays to the same numbers and a
// state renders the same frames forever.
//
// Where a stream starts (an input's sequence, a frame's pixel) is each
// user's own business; this package only draws from it.
package splitmix

// Gamma is SplitMix64's increment, the odd "golden" constant 2^64/φ.
const Gamma = 0x9e3779b97f4a7c15

// Rand is one stream. The zero Rand is the stream seeded with 0. It is not
// safe for concurrent use.
type Rand struct{ s uint64 }

// New returns the stream seeded with seed.
func New(seed uint64) Rand { return Rand{s: seed} }

// Seed restarts r as the stream seeded with seed.
func (r *Rand) Seed(seed uint64) { r.s = seed }

// Uint64 draws the next number.
func (r *Rand) Uint64() uint64 {
	r.s += Gamma
	return Mix(r.s)
}

// Float64 draws a number in [0, 1) with 53 random bits, as random() and
// Math.random() give it.
func (r *Rand) Float64() float64 {
	return float64(r.Uint64()>>11) / (1 << 53)
}

// Mix is SplitMix64's finalizer: it scrambles z so that nearby inputs give
// unrelated outputs, which is what seeds are derived with.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
