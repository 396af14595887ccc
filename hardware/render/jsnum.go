package render

import (
	"math"
	"math/bits"
)

// Numbers as goja computes them: where JavaScript's arithmetic, as goja
// implements it, differs from Go's float64 (integer multiplication and
// powers, rounding, the bitwise operators' conversions), so that the fast
// path gives the same bits as goja.

// maxSafeInt is the largest integer goja keeps as an integer.
const maxSafeInt = 1 << 53

// gojaInt reports whether goja holds v as an integer (valueInt) rather
// than a float: every number is normalized so, and only its integer
// arithmetic differs from IEEE 754's.
func gojaInt(v float64) bool {
	return v == math.Trunc(v) && v >= -maxSafeInt && v <= maxSafeInt && (v != 0 || !math.Signbit(v))
}

// jsMul is goja's a * b: two integers multiply as integers, so a zero
// product is +0 unless it is 0 * -1 (where goja gives -0 like JS).
func jsMul(a, b float64) float64 {
	p := float64(a * b)
	if p == 0 && a != -1 && b != -1 && gojaInt(a) && gojaInt(b) {
		return 0
	}
	return p
}

// jsPow is goja's Math.pow and **: exact for integers whose power fits
// in 64 bits, NaN for 1 ** ±Infinity and 1 ** NaN, else math.Pow.
func jsPow(x, y float64) float64 {
	if gojaInt(x) && gojaInt(y) && y >= 0 {
		if y == 0 {
			return 1
		}
		if x == 0 {
			return 0
		}
		if p, ok := intPow(int64(x), int64(y)); ok {
			return float64(p)
		}
	}
	if math.Abs(x) == 1 && math.IsInf(y, 0) {
		return math.NaN()
	}
	if x == 1 && math.IsNaN(y) {
		return math.NaN()
	}
	return math.Pow(x, y)
}

// intPow is x**y for y >= 0, and false if it does not fit in an int64
// (short of its most negative value, a power of two that math.Pow gives
// exactly anyway).
func intPow(x, y int64) (int64, bool) {
	neg := x < 0 && y&1 == 1
	b := uint64(x)
	if x < 0 {
		b = uint64(-x)
	}
	r := uint64(1)
	for y > 0 {
		if y&1 == 1 {
			hi, lo := bits.Mul64(r, b)
			if hi != 0 {
				return 0, false
			}
			r = lo
		}
		y >>= 1
		if y > 0 {
			hi, lo := bits.Mul64(b, b)
			if hi != 0 {
				return 0, false
			}
			b = lo
		}
	}
	if r > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(r), true
	}
	return int64(r), true
}

// jsRound is Math.round: halves go up, -0 and NaN stay.
func jsRound(f float64) float64 {
	if f != f || f == 0 {
		return f
	}
	t := math.Trunc(f)
	if f >= 0 {
		if f-t >= 0.5 {
			return t + 1
		}
	} else if t-f > 0.5 {
		return t - 1
	}
	return t
}

// jsSign is Math.sign: ±0 and NaN stay.
func jsSign(f float64) float64 {
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	}
	return f
}

// toInt32 and toUint32 are goja's conversions for the bitwise operators.
func toInt32(f float64) int32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int32(int64(f))
}

func toUint32(f float64) uint32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return uint32(int64(f))
}
