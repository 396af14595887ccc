package machine

import (
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// An expression that names none of the light's functions is compiled as
// it would be without them, its fast path included; one that names some
// is linked to their library, and runs in goja.
func TestFunctionsKeepTheFastPath(t *testing.T) {
	c := newCore(nil)
	defer c.wd.close()
	list, r := c.checkFunctions([]messages.Function{{Name: "twice", Params: []string{"x"}, Code: "return 2 * x;"}})
	if r != nil {
		t.Fatal(r)
	}
	fs, r := c.newFuncs(list)
	if r != nil {
		t.Fatal(r)
	}
	tests := []struct {
		kind   exprKind
		src    string
		linked bool
		fast   bool
	}{
		{kindCondition, "getData('n') > 3", false, true},
		{kindAction, "setData('n', getData('n') + 1)", false, true},
		{kindCondition, "getData('twice') === 1", false, true}, // a string, not the function
		{kindCondition, "({twice: 1}).twice === 1", false, false},
		{kindCondition, "twice(getData('n')) > 3", true, false},
		{kindAction, "setData('n', {twice})", true, false},
		{kindAction, "const f = twice; setData('n', f(2))", true, false},
	}
	for _, tt := range tests {
		e, se := c.compile(tt.kind, tt.src, fs)
		if se != nil {
			t.Fatalf("%s: %s", tt.src, se)
		}
		if linked := e.base != nil; linked != tt.linked || (e.fast != nil) != tt.fast {
			t.Errorf("%s: linked %v fast %v, want %v %v", tt.src, linked, e.fast != nil, tt.linked, tt.fast)
		}
	}
}
