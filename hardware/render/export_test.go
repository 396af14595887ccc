package render

import "io"

// UseJavaScriptOnly makes r run every expression in goja, never on the
// fast path, so that tests and benchmarks outside the package can compare
// the two.
func UseJavaScriptOnly(r *Renderer) { r.jsOnly = true }

// NewStatusOn is NewStatus on w, terminal or not.
func NewStatusOn(w io.Writer, lights []string) *Status {
	return &Status{w: w, order: lights, shown: map[string]string{}}
}
