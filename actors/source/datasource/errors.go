package datasource

import "fmt"

// Error is a refused definition or a result that could not be stored. Msg
// is a sentence for the LLM or the CLI user that says what to do; Code is
// the code of the error reply or event (messages.OutErrorData).
type Error struct {
	Code int
	Msg  string
}

// Error codes.
const (
	CodeInvalid     = 400 // the definition is malformed or breaks a rule
	CodeUnknownTool = 404 // fetch.tool names no tool
	CodeBadResult   = 502 // the tool's result (or a pushed message) lacks a stored path
	CodeConflict    = 409 // a gpio source's pin is taken (the LED, the button, another source)
)

// The sentinels for errors.Is, which matches on Code.
var (
	ErrInvalid     = &Error{Code: CodeInvalid}
	ErrUnknownTool = &Error{Code: CodeUnknownTool}
	ErrBadResult   = &Error{Code: CodeBadResult}
	ErrConflict    = &Error{Code: CodeConflict}
)

func (e *Error) Error() string { return "source: " + e.Msg }

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}
