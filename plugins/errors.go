package plugins

import (
	"fmt"
)

// Code says what kind of failure an Error is.
type Code string

const (
	CodeTimeout       Code = "timeout"        // the call ran past its deadline
	CodeOutOfMemory   Code = "out_of_memory"  // the guest needed more than its memory cap
	CodeSyntax        Code = "syntax_error"   // the code does not parse
	CodeException     Code = "js_exception"   // the code threw (or a fetch failed and was not caught)
	CodeInvalidResult Code = "invalid_result" // the code returned something JSON cannot hold
	CodeTrap          Code = "trap"           // the guest crashed or broke the ABI
)

// Error is a call that failed. Line and Column place a syntax error or an
// exception in the tool's code (from 1; 0 when unknown). Compare with
// errors.Is against ErrTimeout and the others, which match on Code.
type Error struct {
	Code         Code
	Message      string
	Line, Column int
}

// The sentinels for errors.Is.
var (
	ErrTimeout       = &Error{Code: CodeTimeout}
	ErrOutOfMemory   = &Error{Code: CodeOutOfMemory}
	ErrSyntax        = &Error{Code: CodeSyntax}
	ErrException     = &Error{Code: CodeException}
	ErrInvalidResult = &Error{Code: CodeInvalidResult}
	ErrTrap          = &Error{Code: CodeTrap}
)

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = string(e.Code)
	}
	if e.Line > 0 {
		return fmt.Sprintf("plugins: %s at line %d, column %d: %s", e.Code, e.Line, e.Column, msg)
	}
	return fmt.Sprintf("plugins: %s: %s", e.Code, msg)
}

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}
