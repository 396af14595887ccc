package messages

import (
	"fmt"
	"slices"
	"strings"
)

// Verbs of custom functions.
const (
	VerbDefineFunction = "define_function" // Function, or {"functions":[…]}
	VerbDeleteFunction = "delete_function" // NameRequest
)

// Configuration ops of custom functions (InConfigData.Op).
const (
	OpDefineFunction = "define_function" // add or replace Functions
	OpDeleteFunction = "delete_function" // delete function Name
)

// Function is a custom function of a light: JavaScript that every rule
// condition, action and state expression of the light may call by name.
//
//		{"name":"is_evening","description":"true from 18:00","params":["h"],"code":"return h >= 18;"}
//
//	  - name         a JavaScript name ([A-Za-z_][A-Za-z0-9_]*, at most
//	    MaxName characters) that no built-in, expression parameter or
//	    reserved word has (CheckFunctionName).
//	  - description  what it does, for people and the agent.
//	  - params       the names of its parameters, in order; optional.
//	  - code         the body of a function of params: statements, with
//	    return giving the value. It sees what expressions see (getData,
//	    random, now …) and the light's other functions.
type Function struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Params      []string `json:"params,omitempty"`
	Code        string   `json:"code"`
}

// Limits of custom functions: how many a light has, how many parameters
// one takes, and how long its code is, in bytes.
const (
	MaxFunctions    = 100
	MaxParams       = 16
	MaxFunctionCode = 16 << 10
)

// reservedNames are the names a function cannot take: what expressions
// already mean by them. Tests in actors/light/machine and hardware/render
// check that every global of their JavaScript runtimes is here.
var reservedNames = func() []string {
	names := slices.Concat(
		// Lumen's built-ins, in rules (machine) and in colors (render).
		[]string{"getData", "setData", "random", "now", "startTimer", "cancelTimer", "brightness", "setBrightness", "hsv", "sin", "cos", "abs", "min", "max", "floor"},
		// The parameters of expressions.
		[]string{"state", "transition", "frame", "t", "i", "n"},
		// JavaScript's standard globals.
		strings.Fields(`Object Function Array String Number BigInt RegExp Date Boolean Proxy Reflect Error AggregateError
			TypeError ReferenceError SyntaxError RangeError EvalError URIError GoError eval Math JSON ArrayBuffer DataView
			Uint8Array Uint8ClampedArray Int8Array Uint16Array Int16Array Uint32Array Int32Array Float32Array Float64Array
			BigInt64Array BigUint64Array Symbol WeakSet WeakMap WeakRef FinalizationRegistry Map Set Promise Intl Atomics
			SharedArrayBuffer globalThis NaN undefined Infinity isNaN parseInt parseFloat isFinite decodeURI
			decodeURIComponent encodeURI encodeURIComponent escape unescape console arguments`),
		// What every object has, and so the object of a light's functions.
		[]string{"__proto__"},
		// JavaScript's reserved words, strict mode's included.
		strings.Fields(`break case catch class const continue debugger default delete do else enum export extends
			false finally for function if import in instanceof new null return super switch this throw true try
			typeof var void while with yield let static implements interface package private protected public
			await`),
	)
	slices.Sort(names)
	return slices.Compact(names)
}()

// ReservedName reports whether name is taken by a built-in, an
// expression's parameter or a JavaScript reserved word.
func ReservedName(name string) bool {
	_, ok := slices.BinarySearch(reservedNames, name)
	return ok
}

// CheckFunctionName says what is wrong with a function's name, or with a
// parameter's (kind "function" or "parameter"): not an identifier, too
// long, or reserved (ReservedName; a parameter may reuse a built-in's
// name, only not a reserved word).
func CheckFunctionName(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("a %s name is empty; give it a name like is_evening", kind)
	case len(name) > MaxName:
		return fmt.Errorf("the %s name %s is %d characters long; names are at most %d characters", kind, Clip(name), len(name), MaxName)
	case !identifier(name):
		return fmt.Errorf("the %s name %s is not a JavaScript name; use letters, digits and _, not starting with a digit, e.g. is_evening", kind, Clip(name))
	case kind == "function" && ReservedName(name):
		return fmt.Errorf("the function name %q is taken by a built-in, an expression's parameter or a JavaScript reserved word; pick another name", name)
	case kind != "function" && jsReserved(name):
		return fmt.Errorf("the %s name %q is a JavaScript reserved word; pick another name", kind, name)
	}
	return nil
}

// jsReserved reports whether name is a word a parameter cannot be.
func jsReserved(name string) bool {
	switch name {
	case "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else", "enum",
		"export", "extends", "false", "finally", "for", "function", "if", "import", "in", "instanceof", "new", "null",
		"return", "super", "switch", "this", "throw", "true", "try", "typeof", "var", "void", "while", "with", "yield",
		"let", "static", "implements", "interface", "package", "private", "protected", "public", "await",
		"arguments", "eval":
		return true
	}
	return false
}

// identifier reports whether s matches [A-Za-z_][A-Za-z0-9_]*.
func identifier(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}
