package render

import (
	"time"

	"github.com/dop251/goja/ast"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/internal/jsbox"
)

// The fast path. Most animations are arithmetic on frame, t, i and n with
// a few helpers; JavaScript boxes every number such an expression makes,
// which for a strip at 60 fps is most of what the daemon spends. So a
// state whose expression channels all stay within that arithmetic is
// compiled, at SetState, into a tree of Go closures over float64 that
// allocates nothing, and only other states start goja.
//
// The subset, parsed with goja's own parser from the same wrapper as
// compileChannel (so it is the same expression):
//
//   - number literals (not the legacy octal ones strict mode rejects),
//     frame, t, i, n, NaN, Infinity;
//   - unary - + ! ~, binary + - * / % ** & | ^ << >> >>>, the comparisons
//     < <= > >= == != === !==, && and ||, c ? a : b, parentheses;
//   - calls of sin, cos, abs, min, max, floor, random, and of Math's
//     functions but hypot (Math.sign only of a number), and Math's
//     constants;
//   - hsv(h, s, v) as a whole channel (or a branch of a channel's c ? a : b),
//     taking the channel's component, and hsv(h, s, v).r, .g, .b anywhere.
//
// Each operation computes what goja computes, down to the sign of a zero
// (goja multiplies integers as integers, so 0 * -2 is +0 there) and the
// rounding of an integer power; the channels of a pixel run in order r, g,
// b on the pixel's one random stream, each argument and operand left to
// right, so random() gives the same numbers. A state with any other
// channel (getData, strings, statements, other names) runs entirely in
// goja, so that the two never have to share a pixel's random stream.
// Errors are goja's too: NaN stops the frame with the same message, and
// a frame that runs past EvalTimeout times out.
//
// This file holds the compiled program and its frame; the compiler is in
// fastcompile.go (operators) and fastcall.go (functions), goja's number
// semantics in jsnum.go.

// maxFastNodes bounds the size of a channel on the fast path (a larger
// one runs in goja), so that the fast path too stays within EvalTimeout
// for all but the longest strips.
const maxFastNodes = 256

// env is what a compiled channel reads: the variables and the pixel's
// random stream.
type env struct {
	frame, t, i, n float64
	rng            pixelRand
}

type (
	numFn  func(*env) float64
	boolFn func(*env) bool
)

// fastProgram is a state's expression channels compiled to Go (nil: a
// numeric channel). It is not safe for concurrent use, like the Renderer
// that owns it.
type fastProgram struct {
	ch     [3]numFn
	random bool // some channel calls random(): seed each pixel's stream
	env    env
}

// compileFast compiles the expression channels of exprs (empty: numeric)
// for the fast path, or returns nil when one of them needs JavaScript.
func compileFast(exprs [3]string) *fastProgram {
	p := &fastProgram{}
	some := false
	for c, src := range exprs {
		if src == "" {
			continue
		}
		e := parseExpression(channelNames[c], src)
		if e == nil {
			return nil
		}
		fc := &fastCompiler{}
		f, ok := fc.channel(e, c)
		if !ok || fc.nodes > maxFastNodes {
			return nil
		}
		p.ch[c], p.random, some = f, p.random || fc.random, true
	}
	if !some {
		return nil
	}
	return p
}

// parseExpression parses src as compileChannel does first, and returns
// the expression it returns, or nil if it is not a single expression (a
// syntax error, or a function body).
func parseExpression(name, src string) ast.Expression {
	prog, err := jsbox.Parse(name, chanHead+src+chanTail)
	if err != nil || !wellFormed(prog, true) {
		return nil
	}
	fl := prog.Body[0].(*ast.ExpressionStatement).Expression.(*ast.FunctionLiteral)
	return fl.Body.List[1].(*ast.ReturnStatement).Argument
}

// frame computes the pixels of dst like engine.frame, within timeout
// (checked every 64 pixels: only a long strip with large expressions
// comes near it).
func (p *fastProgram) frame(frame int, t float64, seed uint64, base hardware.RGB, dst []hardware.RGB, timeout time.Duration) error {
	e := &p.env
	e.frame, e.t, e.n = float64(frame), t, float64(len(dst))
	var start time.Time
	if len(dst) >= 64 {
		start = time.Now()
	}
	for i := range dst {
		if i&63 == 63 && time.Since(start) > timeout {
			return timeoutError(timeout, frame)
		}
		e.i = float64(i)
		if p.random {
			e.rng.seed(seed, frame, i)
		}
		px := base
		for c, f := range p.ch {
			if f == nil {
				continue
			}
			v := f(e)
			if v != v {
				return notNumber(c, i, frame, 0)
			}
			switch c {
			case 0:
				px.R = jsChannel(v)
			case 1:
				px.G = jsChannel(v)
			default:
				px.B = jsChannel(v)
			}
		}
		dst[i] = px
	}
	return nil
}

// jsChannel is frameJS's v >= 255 ? 255 : v > 0 ? Math.round(v) : 0.
func jsChannel(v float64) uint8 {
	switch {
	case v >= 255:
		return 255
	case v > 0:
		return uint8(jsRound(v))
	}
	return 0
}
