package machine

import "github.com/dop251/goja/ast"

// fastExpr evaluates an expression of a very common shape without
// entering goja, with exactly the result goja would give.
type fastExpr interface {
	test(c *core) (bool, *failure) // a condition
	run(c *core) *failure          // an action
}

func fastPath(kind exprKind, prog *ast.Program, src string) fastExpr { return nil }
