package render

// UseJavaScriptOnly makes r run every expression in goja, never on the
// fast path, so that tests and benchmarks outside the package can compare
// the two.
func UseJavaScriptOnly(r *Renderer) { r.jsOnly = true }
