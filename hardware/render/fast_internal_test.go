package render

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/messages"
)

// fastExprs all run on the fast path, and must give what goja gives.
var fastExprs = []string{
	// variables, literals, precedence
	"frame*20", "t*100", "n-i", "i*255/(n-1)", "1+2*3", "(1+2)*3", "2 + 3 * 4 - 10 / 5 + i",
	"100 - i - 3", "2 ** 3 ** 2 / 2", "(2 ** 2) ** 3 - i", "0x1F + i", "1e2 + i", ".5 * 255",
	"0b101 * i", "0o17 * i", "5. + i", "1e400", "i * 1e-320 * 1e300",
	// unary
	"-i + 200", "-(-i) * 10", "+t * 300", "-0", "1/(-i)", "-(i > 3) + 1", "+(i > 3) * 99",
	// % and /
	"i % 3 * 100", "(i-4) % 3 * 100 + 128", "-i % 3 + 10", "1/((i-4)%2)", "t % 0.03 * 5000",
	"i % 0", "5 % -3 * 50", "-5 % 3 + 3", "i % Infinity * 20", "Infinity % 2", "i % -0.5 * 255",
	"i/0", "-i/0", "0/0", "(i-4)/0", "1/Infinity", "-1/Infinity*5+1", "(t-i)/(i-4)",
	// goja multiplies integers as integers: the sign of a zero product
	"1/(i*-3)", "1/(-3*i)", "1/(i*-1)", "1/(-1*i)", "1/((i-4)*0)", "1/(0*(i-4))", "1/(-i*0.5*0)",
	"1/(i*-2.5)", "1/(-0*i)", "1/((-i)*3)",
	// helpers and Math
	"sin(t*2+i*0.3)*127+128", "cos(i)*200", "abs(i-4)*30", "floor(t*10+i)", "floor()",
	"Math.round(i*0.5)*40", "1/Math.round(-0.2*i)", "Math.round(-i*0.5)+10", "Math.round(2.5 - i)+10",
	"Math.ceil(i/3)*50", "Math.sqrt(i)*60", "Math.pow(i, 2)*3", "i**3", "2**-i*255", "Math.pow(-i, 0.5)",
	"Math.pow(1, Infinity)", "Math.pow(1, NaN)", "Math.pow(NaN, 0)+1", "Math.pow(-1, -Infinity)",
	"(i+3) ** 40 % 255", "3 ** 35 % 256", "Math.pow(i+2, 36) % 251", "(-3) ** 39 % 253 + 200",
	"Math.pow(i+2, 60.5) % 251", "(i*9007199254740993) % 256", "frame * 1e15 % 255",
	"Math.PI*i*10", "Math.E*20", "Math.SQRT2*100", "Math.SQRT1_2*100+Math.LN2*50+Math.LN10+Math.LOG2E+Math.LOG10E",
	"Math.trunc(-i/3)+100", "Math.sign(i-4)*100+128", "1/Math.sign(-0*i)", "Math.atan2(i, 3)*100",
	"Math.exp(i/4)*10", "Math.log(i+1)*50", "Math.log2(n)*20", "Math.log10(i)*-1", "Math.cbrt(i*9)*20",
	"Math.tan(i)*20+100", "Math.asin(i/9)*100", "Math.acos(i/9)*100", "Math.atan(i)*100",
	"Math.sinh(i/3)*10", "Math.cosh(i/3)*10", "Math.tanh(i-4)*100+128", "Math.asinh(i)*50",
	"Math.acosh(i)*50", "Math.atanh(i/9)*100", "Math.expm1(i/3)*10", "Math.log1p(i)*50",
	"Math.fround(i/3)*100", "Math.clz32(i)*8", "Math.imul(i, 3)*10", "Math.imul(-i, 0x7fffffff) % 255",
	"Math.sin()", "Math.sin(i, 5)*100+100", "Math.trunc(i > 3)*9", "Math.pow(i > 3, 2)+Math.pow(2, i > 3)", "Math.pow(i)", "Math.atan2()",
	// min and max, every arity
	"min()", "max()", "-min()", "min(i)*10", "max(i, 3)*10", "min(i, 4, 7-i)*20", "max(i, NaN)",
	"max(NaN, i, random())", "min(i, 3, random()*9)*20", "1/max(-0, 0)", "1/min(-0, 0)", "1/min(0, -0)",
	"Math.max(i, t*100, frame*30, 2)", "max(Infinity, NaN)", "min(-Infinity, NaN)", "max(NaN, Infinity)",
	"Math.max(Infinity, NaN, 1)", "Math.min(1, -Infinity, NaN)", "max(-Infinity)", "min(Infinity, i)", "Math.min(i, -i)+100",
	// random
	"random()*255", "random()*100 + random()*100", "Math.random()*255", "random(random())*255",
	"sin(1, random())*100+random()*100", "frame > 2 ? random()*255 : random()*10",
	"random() < 0.5 ? 0 : random()*255", "min(random(), random(), random())*255",
	// hsv, whole and taken apart
	"hsv(t*60+i*6,1,1)", "hsv(i*40,1,1).r", "hsv(i*40,1,1).g + hsv(i*40+120,1,1).b / 2",
	"hsv(-i*50, 0.5, 0.8)", "hsv(i*40, 2, -1)", "hsv(i*40, 0.3, 7)", "hsv(i*40)", "hsv()",
	"hsv(Infinity, 1, 1)", "hsv(i*60, NaN, 1)", "hsv(hsv(i*30,1,1).r, 1, 1)", "hsv(random()*360, 1, 1)",
	"hsv(i*40, random(), 1).g", "hsv(1,1,1,random())", "hsv(i*45, 1, 1, random()).b + random()*10",
	"i < 4 ? hsv(i*30,1,1) : hsv(200,1,1)", "i < 4 ? hsv(i*30,1,1) : 17", "(hsv(i*40, 1, 1)).g",
	"hsv(360*1e300, 1, 1)", "hsv(359.99999999999994, 1, 1)", "hsv(-1e-300, 1, 1)",
	// conditions
	"i < 3 ? 255 : 0", "i <= 3 ? 255 : i >= 6 ? 128 : 0", "i === 2 ? 255 : 10", "i !== 2 ? 255 : 10",
	"i == 2 || i == 5 ? 200 : 50", "!(i > 2) && frame % 2 == 0 ? 200 : 50", "i % 2 ? 255 : 0",
	"(i > 2) * 255", "(i > 2) + (i > 5)", "(i > 2 && 200) * 1", "i && 100", "0 || i*10", "NaN || 5",
	"i - 4 || 77", "(i > 2) === (i > 5) ? 10 : 20", "(i < 3) != (frame > 1) ? 10 : 20",
	"NaN < 1 ? 10 : 20", "!(NaN >= 1) ? 10 : 20", "NaN != NaN ? 100 : 0", "NaN == NaN ? 100 : 0",
	"(i > 2) < 1 ? 30 : 60", "i ? (i > 4 ? 1 : 2) * 50 : 9", "(i > 3 ? i : 0) ? 100 : 200",
	"(i > 3 ? i > 5 : 1) ? 100 : 200", "!i ? 3 : 4", "!!(i % 3) * 90", "!(i > 3) + 8",
	"0 * -1 === 0 ? 10 : 20", "-0 === 0 ? 10 : 20", "Infinity > 1e308 ? 1 : 2",
	// bitwise
	"(i | 0) * 10", "t*10000 | 0", "i << 4", "-i >> 1", "(-i >>> 28) * 10", "~i + 20", "i & 5", "i ^ 3",
	"(t*1e10) | 0", "((1e20*i)|0) % 255", "(NaN | 0) + 1", "(Infinity >> 1) + 2", "1 << 31 >>> 24",
	"1 << (i + 30)", "(2**32 + i) | 0", "(-(2**31) - i) | 0",
	// comments and layout
	"i /* pixel */ * 20", "i * 20 // a comment", "i\n*\n20",
}

// slowExprs run in goja.
var slowExprs = []string{
	"getData('x') || 5", "'12'", "(i = 3)", "x + 1", "Math.hypot(i, 3)", "hsv(1,1,1).x",
	"i > 2", "round(i)", "[1,2][0]", "`${i}`*1", "(() => 5)()", "return 5",
	"if (i > 2) return 10; return 20", "true ? 5 : 6", "010 + i", "08 + i", "this ? 1 : 2",
	"typeof i === 'number' ? 5 : 6", "Math['sin'](i)", "hsv(1,1,1)['r']", "sin", "Math.PI()",
	"i, 5", "hsv(1,1,1) * 2", "i > 2 ? hsv(1,1,1) : i > 3", "(i > 2) === 1 ? 3 : 4",
	"void i", "i ?? 3", "Math.sign(i > 3) === false ? 1 : 2", "Math.sign()", "1n", "Math.sin(...[1])", "undefined", "globalThis.Math.PI",
	"i > 2 && hsv(1,1,1)", "i > 2 && 200", "-2**31", "random", "new Date()", "Date.now() % 255", "Math.random",
	strings.Repeat("i+", maxFastNodes) + "i",
}

func newPair(t *testing.T, o Options) (fast, js *Renderer) {
	t.Helper()
	o.EvalTimeout = 5 * time.Second
	mk := func(jsOnly bool) *Renderer {
		r, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		r.jsOnly = jsOnly
		t.Cleanup(r.Close)
		return r
	}
	return mk(false), mk(true)
}

// frames renders frames 0..k-1 of st, as text.
func frames(t *testing.T, r *Renderer, st messages.State, seed uint64, k int) string {
	t.Helper()
	at := time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC)
	var b strings.Builder
	if err := r.SetState(st, at, seed, nil); err != nil {
		fmt.Fprintf(&b, "SetState: %v\n", err)
	}
	period := 100 * time.Millisecond
	if st.Speed != nil {
		period = time.Duration(*st.Speed) * time.Millisecond
	}
	for f := range k {
		fr := r.Frame(at.Add(time.Duration(f) * period))
		fmt.Fprintf(&b, "%d %v err=%v\n", fr.N, fr.Raw, fr.Err)
	}
	return b.String()
}

func expr(s string) messages.Channel { return messages.Expr(s) }

// TestFastPathMatchesJavaScript renders states made of each expression on
// both paths: every pixel of every frame, and every error, must agree.
func TestFastPathMatchesJavaScript(t *testing.T) {
	fast, js := newPair(t, Options{Pixels: 9, Gamma: 1})
	sp := 37
	check := func(t *testing.T, st messages.State, wantFast bool) {
		t.Helper()
		for _, seed := range []uint64{0, 5} {
			got, want := frames(t, fast, st, seed, 6), frames(t, js, st, seed, 6)
			if (fast.fast != nil) != wantFast {
				t.Errorf("on the fast path: %v, want %v", fast.fast != nil, wantFast)
			}
			if js.fast != nil {
				t.Error("the JavaScript-only renderer took the fast path")
			}
			if got != want {
				t.Errorf("seed %d: fast path\n%s\nJavaScript\n%s", seed, got, want)
			}
		}
	}
	for _, x := range fastExprs {
		t.Run(x, func(t *testing.T) {
			// Alone, in r and b around a random g (one random stream a
			// pixel, in channel order), and in all three (a color's
			// components); animated and static.
			check(t, messages.State{R: expr(x), G: messages.Num(7), B: messages.Num(300), Speed: &sp}, true)
			check(t, messages.State{R: expr(x), G: expr("random()*255"), B: expr(x), Speed: &sp}, true)
			check(t, messages.State{R: expr(x), G: expr(x), B: expr(x)}, true)
		})
	}
	for _, x := range slowExprs {
		t.Run("goja/"+x, func(t *testing.T) {
			check(t, messages.State{R: expr(x), G: expr("random()*255"), B: expr("i*20"), Speed: &sp}, false)
		})
	}
	// One channel that needs JavaScript takes the whole state there, so
	// that random() keeps its order.
	t.Run("mixed", func(t *testing.T) {
		check(t, messages.State{R: expr("random()*255"), G: expr("getData('v') === undefined ? random()*255 : 0"), B: expr("random()*255"), Speed: &sp}, false)
	})
}

// gojaEval compiles src in a goja engine like the renderer's and returns
// a function that evaluates it for one pixel with its own random stream.
// With the value it returns the stream's next draw, which tells where the
// stream was left as exactly as its state (each draw is a bijection of it).
func gojaEval(t *testing.T, e *engine, c int, src string) func(frame int, tt float64, i, n int, seed uint64) (float64, uint64) {
	t.Helper()
	v, err := e.compileChannel(channelNames[c], src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	f, ok := goja.AssertFunction(v)
	if !ok {
		t.Fatalf("%s: not a function", src)
	}
	return func(frame int, tt float64, i, n int, seed uint64) (float64, uint64) {
		e.rng.seed(seed, frame, i)
		res, err := f(goja.Undefined(), e.vm.ToValue(frame), e.vm.ToValue(tt), e.vm.ToValue(i), e.vm.ToValue(n))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if o, ok := res.(*goja.Object); ok {
			res = o.Get(channelNames[c])
		}
		if _, ok := res.Export().(float64); !ok {
			if _, ok := res.Export().(int64); !ok {
				t.Fatalf("%s gave %v, not a number", src, res)
			}
		}
		return res.ToFloat(), e.rng.Uint64()
	}
}

func fastEval(t *testing.T, c int, src string) func(frame int, tt float64, i, n int, seed uint64) (float64, uint64) {
	t.Helper()
	var exprs [3]string
	exprs[c] = src
	p := compileFast(exprs)
	if p == nil {
		t.Fatalf("%s is not on the fast path", src)
	}
	return func(frame int, tt float64, i, n int, seed uint64) (float64, uint64) {
		e := &p.env
		e.frame, e.t, e.i, e.n = float64(frame), tt, float64(i), float64(n)
		e.rng.seed(seed, frame, i)
		return p.ch[c](e), e.rng.Uint64()
	}
}

func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// checkValues compares the unrounded values (down to the sign of zero)
// and the random numbers used, pixel by pixel.
func checkValues(t *testing.T, e *engine, c int, src string) {
	t.Helper()
	want, got := gojaEval(t, e, c, src), fastEval(t, c, src)
	const n = 9
	for _, frame := range []int{0, 1, 7, 1000} {
		tt := (time.Duration(frame) * 37 * time.Millisecond).Seconds()
		for i := range n {
			wv, ws := want(frame, tt, i, n, 3)
			gv, gs := got(frame, tt, i, n, 3)
			if !sameFloat(wv, gv) || ws != gs {
				t.Fatalf("%s (channel %s) at frame %d pixel %d: fast path %v (%x), goja %v (%x); random state %x, %x",
					src, channelNames[c], frame, i, gv, math.Float64bits(gv), wv, math.Float64bits(wv), gs, ws)
			}
		}
	}
}

// TestFastPathValues compares the exact values of the table's expressions.
func TestFastPathValues(t *testing.T) {
	e := newEngine(1, time.Second)
	for _, x := range fastExprs {
		for c := range 3 {
			checkValues(t, e, c, x)
		}
	}
}

// TestFastPathRandomExpressions compares the exact values of generated
// expressions: every operator and helper, nested.
func TestFastPathRandomExpressions(t *testing.T) {
	e := newEngine(1, time.Second)
	g := exprGen{rand.New(rand.NewPCG(1, 2))}
	count := 1500
	if testing.Short() {
		count = 200
	}
	for k := 0; k < count; {
		c := k % 3
		src := g.channel(4)
		fc := &fastCompiler{}
		if _, ok := fc.channel(parseExpression("r", src), c); !ok && fc.nodes > maxFastNodes {
			continue // too large for the fast path
		}
		checkValues(t, e, c, src)
		if t.Failed() {
			return
		}
		k++
	}
}

type exprGen struct{ r *rand.Rand }

func (g exprGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g exprGen) channel(d int) string {
	switch g.r.IntN(6) {
	case 0:
		return fmt.Sprintf("hsv(%s, %s, %s)", g.num(d-1), g.num(d-1), g.num(d-1))
	case 1:
		return fmt.Sprintf("%s ? hsv(%s, 1, 1) : %s", g.cond(d-1), g.num(d-1), g.num(d-1))
	}
	return g.num(d)
}

func (g exprGen) leaf() string {
	return g.pick("frame", "t", "i", "n", "0", "1", "-1", "2", "3", "-3", "0.5", "2.5", "-0.5", "255",
		"7", "1e9", "0x10", "NaN", "Infinity", "Math.PI", "random()", "-0", "9007199254740993", "1e-310")
}

// num gives an expression of a number.
func (g exprGen) num(d int) string {
	if d <= 0 || g.r.IntN(5) == 0 {
		return g.leaf()
	}
	v := func() string { return g.val(d - 1) }
	switch g.r.IntN(10) {
	case 0, 1, 2:
		op := g.pick("+", "-", "*", "/", "%", "**", "*", "*", "-", "&", "|", "^", "<<", ">>", ">>>")
		return "((" + v() + ") " + op + " (" + v() + "))"
	case 3:
		return "((" + g.num(d-1) + ") " + g.pick("&&", "||") + " (" + g.num(d-1) + "))"
	case 4:
		return g.pick("-", "+", "~") + "(" + v() + ")"
	case 5:
		f := g.pick("sin", "cos", "abs", "floor", "Math.round", "Math.ceil", "Math.sqrt", "Math.sign",
			"Math.trunc", "Math.exp", "Math.log", "Math.fround", "Math.clz32", "Math.tanh", "Math.cbrt")
		if f == "Math.sign" { // not for a boolean: see call
			return f + "(" + g.num(d-1) + ")"
		}
		return f + "(" + v() + ")"
	case 6:
		f := g.pick("min", "max", "Math.min", "Math.max", "Math.pow", "Math.atan2", "Math.imul", "random")
		args := make([]string, g.r.IntN(4))
		for k := range args {
			args[k] = v()
		}
		return f + "(" + strings.Join(args, ", ") + ")"
	case 7:
		return "(" + g.cond(d-1) + " ? " + g.num(d-1) + " : " + g.num(d-1) + ")"
	case 8:
		return fmt.Sprintf("hsv(%s, %s, %s).%s", v(), v(), v(), g.pick("r", "g", "b"))
	}
	return "+(" + g.cond(d-1) + ")"
}

// val gives an expression of a number or a boolean.
func (g exprGen) val(d int) string {
	if g.r.IntN(4) == 0 {
		return g.cond(d)
	}
	return g.num(d)
}

// boolean gives an expression of a boolean.
func (g exprGen) boolean(d int) string {
	switch g.r.IntN(3) {
	case 0:
		return "!(" + g.val(d-1) + ")"
	case 1:
		return "((" + g.num(d-1) + ") " + g.pick("==", "!=", "===", "!==") + " (" + g.num(d-1) + "))"
	}
	return "((" + g.val(d-1) + ") " + g.pick("<", "<=", ">", ">=") + " (" + g.val(d-1) + "))"
}

// cond gives an expression for a condition.
func (g exprGen) cond(d int) string {
	switch g.r.IntN(6) {
	case 0:
		return "!(" + g.val(d-1) + ")"
	case 1:
		return "(" + g.cond(d-1) + g.pick(" && ", " || ") + g.cond(d-1) + ")"
	case 2:
		return "(" + g.num(d-1) + ")"
	case 3:
		return "((" + g.boolean(d-1) + ") " + g.pick("==", "!=", "===", "!==") + " (" + g.boolean(d-1) + "))"
	case 4:
		return "((" + g.num(d-1) + ") " + g.pick("==", "!=", "===", "!==") + " (" + g.num(d-1) + "))"
	}
	return "((" + g.val(d-1) + ") " + g.pick("<", "<=", ">", ">=") + " (" + g.val(d-1) + "))"
}

// A fast state makes no JavaScript runtime, and its frames allocate
// nothing but the slices Frame returns.
func TestFastPathAllocations(t *testing.T) {
	r, err := New(Options{Pixels: 60})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sp := 16
	st := messages.State{
		R: expr("sin(t*2+i*0.3)*127+128"), G: expr("hsv(t*60+i*6,1,1)"), B: expr("i % 3 ? random()*50 : min(i, frame)"),
		Speed: &sp,
	}
	at := time.Unix(0, 0)
	if err := r.SetState(st, at, 1, nil); err != nil {
		t.Fatal(err)
	}
	if r.fast == nil || r.js != nil {
		t.Fatalf("fast program %v, JavaScript runtime %v: want only the fast program", r.fast != nil, r.js != nil)
	}
	dst := make([]hardware.RGB, 60)
	k := 0
	if a := testing.AllocsPerRun(100, func() {
		k++
		if err := r.fast.frame(k, float64(k)/60, 1, hardware.RGB{}, dst, time.Second); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations a fast frame, want 0", a)
	}
	if a := testing.AllocsPerRun(100, func() {
		k++
		r.Frame(at.Add(time.Duration(k) * 16 * time.Millisecond))
	}); a > 2 {
		t.Errorf("%v allocations a Frame, want 2 (Raw and Out)", a)
	}
}

// The fast path keeps to EvalTimeout too, on a long strip.
func TestFastPathTimeout(t *testing.T) {
	r, err := New(Options{Pixels: 1024, EvalTimeout: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sp := 10
	at := time.Unix(0, 0)
	if err := r.SetState(messages.State{R: expr("hsv(i*t*1e9, 1, 1)"), G: messages.Num(1), B: messages.Num(2), Speed: &sp}, at, 1, nil); err != nil {
		t.Fatal(err)
	}
	if r.fast == nil {
		t.Fatal("not on the fast path")
	}
	f := r.Frame(at)
	if f.Err != nil || f.Raw[0] != r.opts.ErrorColor || f.Raw[1023] != r.opts.ErrorColor {
		t.Errorf("raw %v … %v, error %v, want the error color and no error before the state is stopped", f.Raw[0], f.Raw[1023], f.Err)
	}
	for k := 1; k < StopAfter; k++ {
		f = r.Frame(at.Add(time.Duration(k*sp) * time.Millisecond))
	}
	var to interface{ Timeout() bool }
	if f.Err == nil || !errors.As(f.Err, &to) || !to.Timeout() || !strings.Contains(f.Err.Error(), "stopped") {
		t.Fatalf("error %v, want the state stopped", f.Err)
	}
	if f.Raw[0] != r.stoppedColor() || f.Raw[1023] != r.stoppedColor() {
		t.Errorf("raw %v … %v, want the stopped color", f.Raw[0], f.Raw[1023])
	}
}

// Strips longer than the 64 pixels between time checks render alike.
func TestFastPathLongStrips(t *testing.T) {
	sp := 20
	st := messages.State{R: expr("hsv(i*5+t*60,1,1)"), G: expr("random()*255"), B: expr("i"), Speed: &sp}
	for _, px := range []int{63, 64, 65, 130} {
		fast, js := newPair(t, Options{Pixels: px})
		if got, want := frames(t, fast, st, 9, 3), frames(t, js, st, 9, 3); got != want || fast.fast == nil {
			t.Errorf("%d pixels: fast path (%v)\n%s\nJavaScript\n%s", px, fast.fast != nil, got, want)
		}
	}
}
