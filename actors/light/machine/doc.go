// Package machine is a light's state machine, pure: no I/O, no clock, no
// global randomness. The light actor feeds it journaled inputs in stream
// order and publishes what it returns; `lumen replay` feeds it the same
// inputs and gets the same outputs, byte for byte.
//
// # Model
//
// States are colors; the built-in state off (0,0,0) always exists. Rules
// {id, from, on, to, condition, action, priority, enabled} react to
// transitions: the enabled rules whose from matches the current state
// (exactly, "*", or "prefix/*") and whose on is the transition are tried
// by priority (highest first), then insertion order; the first whose
// condition holds (or that has none) fires: its action runs, then the
// light enters its to state. Self-transitions fire too.
//
// Layers are rules added for a while (append_rules with a layer): tried
// before the light's own rules, the newest layer first, until the layer's
// lifetime ends (fires, ms or until); then the light removes it by itself
// with a layer output and returns to the state it had when the layer
// began. See layers.go.
//
// Custom tool definitions (name, description, params, code, returns,
// hosts) are part of the model too: define_tool and delete_tool config
// inputs change them and apply replaces them. The machine only checks a
// tool's code (it must parse as the body of an async function of params);
// it never runs it.
//
// # Expressions
//
// Conditions (one expression, read-only) and actions (statements) are
// JavaScript run by goja, compiled once when the configuration is
// applied, as strict functions of (state, transition). Besides the
// standard built-ins they see getData, setData, random, now, startTimer
// and cancelTimer. random() (and Math.random) is a SplitMix64 stream
// seeded from the input's stream sequence and shared by every expression
// of the input in evaluation order; now() (and Date) is the input's time.
// Every built-in is frozen and eval is removed, so no evaluation can leave
// state for a later one. An action's effects apply only if it completes.
//
// Custom functions (define_function, delete_function, apply's functions)
// are the light's own JavaScript, compiled together into one frozen
// library whenever they change. An expression that names one is linked to
// the library: it calls it by name, inside its own evaluation, so the
// bounds, random() and now() are the expression's; one that names none is
// compiled as before, fast path included. A change to the functions is
// checked against every rule, color and function that calls them.
//
// Each evaluation is bounded in time (WithEvalTimeout): a rule that runs
// out of time, or throws, is skipped with an error output and the next
// candidate is tried. A timeout is the one thing replay cannot reproduce,
// so replay passes the recorded ones in Event.TimedOut: those rules are
// not run, and give the same error. After a timed-out rule, random()
// continues from a point fixed by the input and the rule, not by how many
// numbers the rule drew before it was stopped.
//
// # Outputs
//
// Every input yields at least one output. A fire gives, in order: the
// errors of skipped rules, then one var output per variable whose value
// changed (in order of first change, with its final value), then timer
// outputs in call order (replacing a timer gives cancel then set), then
// the state output; or, when no rule fires, the errors and one ignored
// output. An input that ends a layer by its fires gives the layer output
// and the state output back to where the layer began (when it restores);
// after any input, the until conditions that fail give error outputs and
// those that hold end their layers, each a layer output and, when it
// restores, a state output. A rejected input changes nothing and gives
// one error output (kind rejected, code 400, 404 or 409, and a sentence
// that says what to fix).
//
// # Files
//
// machine.go applies inputs and fires rules; layers.go holds the
// temporary layers; match.go is where a rule's from is matched and the
// candidates are put in order; tx.go holds an
// action's effects until it completes. model.go, validate.go and config.go
// are the configuration's types, its checks and the config input's ops;
// view.go reads the model out. js.go and fast.go evaluate expressions,
// functions.go holds the custom functions, rand.go starts random()'s
// streams.
package machine
