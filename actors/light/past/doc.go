// Package past reads a light's past from its journal, with no actor and
// no side effects: the fold of inputs into the machine that the light
// actor also recovers with, replay and its check against what was
// journaled, why a state was entered, what a configuration would have
// done, the history of configuration changes, and self-contained slices
// of a journal. The daemon's service answers get --at, history, why,
// whatif and rollback with it; the CLI replays journals with it.
package past
