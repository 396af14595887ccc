package agent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lumen-home/lumen/agent/phrase"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/color"
)

// The local understanding of everyday light commands: "turn off the
// kitchen light", "upstairs lights on", "a bit brighter", "make it
// purple", "fade to blue over 2 minutes". It is pure and table driven
// (understand_words.go): a sentence is taken only when every one of its
// words is known — a name of the house, a state, a color, a number, or a
// word of the lexicon — and it says exactly one thing to do to one
// target. Anything else (a condition, a time, a count, a sequence, a
// question, the past, a word it does not know) goes to the model:
// precision first.

// Named is one light as requests may name it.
type Named struct {
	Light   string   `json:"light"`
	Room    string   `json:"room,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
	Groups  []string `json:"groups,omitempty"`
	States  []string `json:"states"`
}

// World is what the understanding knows of the house, said to one light
// (Self): the names of its lights, rooms and groups. Build it with
// NewWorld; it is read-only after.
type World struct {
	Self    string
	lights  map[string]*Named
	names   map[string]Target // a name's words, space-joined -> its target
	groups  map[string][]string
	rooms   map[string][]string
	longest int // words of the longest name
}

// Target is what a command is about: some lights (one, or a room's),
// a group, or every light.
type Target struct {
	Lights []string // sorted
	Room   string   // when the lights are a room's
	Group  string
	All    bool
}

// Arg is the target as the everyday tools take it (their "light"
// argument): "" for the light spoken to, a light's name, "room:NAME",
// "group:NAME" or "all".
func (t Target) Arg(self string) string {
	switch {
	case t.All:
		return TargetAll
	case t.Group != "":
		return "group:" + t.Group
	case t.Room != "" && len(t.Lights) != 1:
		return "room:" + t.Room
	case len(t.Lights) == 1 && t.Lights[0] != self:
		return t.Lights[0]
	}
	return ""
}

// TargetAll is the everyday tools' "light" argument for every light.
const TargetAll = "all"

// NewWorld indexes the lights a request said to self may name. A
// light's name (with _ and - read as spaces) and its aliases beat a room
// or a group of the same words.
func NewWorld(self string, lights []Named) *World {
	w := &World{Self: self, lights: map[string]*Named{}, names: map[string]Target{}, groups: map[string][]string{}, rooms: map[string][]string{}}
	for i := range lights {
		l := &lights[i]
		w.lights[l.Light] = l
		for _, g := range l.Groups {
			w.groups[g] = append(w.groups[g], l.Light)
		}
		if r := sayable(l.Room); r != "" {
			w.rooms[r] = append(w.rooms[r], l.Light)
		}
	}
	add := func(name string, t Target) {
		if name = sayable(name); name != "" {
			w.names[name] = t
			w.longest = max(w.longest, strings.Count(name, " ")+1)
		}
	}
	for g, ls := range w.groups {
		slices.Sort(ls)
		add(g, Target{Group: g, Lights: ls})
	}
	for r, ls := range w.rooms {
		slices.Sort(ls)
		add(r, Target{Room: r, Lights: ls})
	}
	for _, l := range lights {
		t := Target{Lights: []string{l.Light}}
		add(l.Light, t)
		for _, a := range l.Aliases {
			add(a, t)
		}
	}
	return w
}

// sayable is a name as a person says it: lower case, _ and - as spaces,
// one space between words.
func sayable(name string) string {
	return strings.Join(splitWords(name), " ")
}

// Lights lists the world's lights, sorted.
func (w *World) Lights() []string {
	out := make([]string, 0, len(w.lights))
	for l := range w.lights {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// Groups lists the world's groups, sorted.
func (w *World) Groups() []string {
	out := make([]string, 0, len(w.groups))
	for g := range w.groups {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// Command is one everyday command: what to do (a tool of the agent and
// its arguments) and to what.
type Command struct {
	Target Target
	Tool   string // ToolPower, ToolToggle, ToolSetBrightness, ToolSetColor, ToolSetState or ToolFire
	On     bool   // ToolPower
	// ToolSetBrightness: Percent (1–100) or Delta (±1–99).
	Percent, Delta int
	// ToolSetColor: Color (a name of the color table or #rrggbb), or
	// Kelvin.
	Color  string
	Kelvin int
	State  string // ToolSetState
	Fire   string // ToolFire: the transition
	// FadeMs is the fade asked for; Fade says one was.
	FadeMs int
	Fade   bool
}

// Args are the command's tool arguments (without the target).
func (c Command) Args() map[string]any {
	a := map[string]any{}
	switch c.Tool {
	case ToolPower:
		a["on"] = c.On
	case ToolSetBrightness:
		if c.Delta != 0 {
			a["delta"] = c.Delta
		} else {
			a["percent"] = c.Percent
		}
	case ToolSetColor:
		if c.Kelvin != 0 {
			a["kelvin"] = c.Kelvin
		} else if strings.HasPrefix(c.Color, "#") {
			a["hex"] = c.Color
		} else {
			a["name"] = c.Color
		}
	case ToolSetState:
		a["name"] = c.State
	case ToolFire:
		a["transition"] = c.Fire
	}
	if c.Fade {
		a["fade_ms"] = c.FadeMs
	}
	return a
}

// String is the command as the corpus writes it: "kitchen off",
// "group:upstairs brightness +10", "hall color purple fade 10000".
func (c Command) String() string {
	var t string
	switch {
	case c.Target.All:
		t = "all"
	case c.Target.Group != "":
		t = "group:" + c.Target.Group
	default:
		t = strings.Join(c.Target.Lights, ",")
	}
	var a string
	switch c.Tool {
	case ToolPower:
		a = map[bool]string{true: "on", false: "off"}[c.On]
	case ToolToggle:
		a = "toggle"
	case ToolSetBrightness:
		if c.Delta != 0 {
			a = fmt.Sprintf("brightness %+d", c.Delta)
		} else {
			a = fmt.Sprintf("brightness %d", c.Percent)
		}
	case ToolSetColor:
		if c.Kelvin != 0 {
			a = fmt.Sprintf("color %dK", c.Kelvin)
		} else {
			a = "color " + c.Color
		}
	case ToolSetState:
		a = "state " + c.State
	case ToolFire:
		a = "click"
	}
	s := t + " " + a
	if c.Fade {
		s += fmt.Sprintf(" fade %d", c.FadeMs)
	}
	return s
}

// Outcome is what the understanding made of a sentence.
type Outcome int

// Outcomes.
const (
	// ToModel: not an everyday command, or not one it is sure of.
	ToModel Outcome = iota
	// Understood: the Command.
	Understood
	// UnknownName: an everyday command about a name no light, room or
	// group answers to (Unknown is the name): never guessed.
	UnknownName
)

// Reading is the understanding of one sentence.
type Reading struct {
	Outcome Outcome
	Command Command
	Unknown string // UnknownName's name
}

// token kinds.
type kind uint8

const (
	kUnknown kind = iota
	kFiller
	kNoun // light, lights, lamp: after a name, or the light spoken to
	kSelf
	kAll
	kName
	kOn
	kOff
	kToggle
	kUp
	kDown
	kSmall
	kBig
	kBrightness
	kPercent
	kAbs
	kTo
	kAt
	kBy
	kIn
	kFor
	kOver
	kUnit
	kSlow
	kFade
	kFadeIn
	kFadeOut
	kClick
	kNumber
	kColor
	kKelvin
	kState
	kThe
)

type token struct {
	kind kind
	word string // the first word
	n    int    // kNumber, kAbs: the value; kUnit: ms per unit; kSmall, kBig: the step
	s    string // kColor, kState: the name
	t    *Target
}

// Understand reads text said to w.Self. It allocates little and
// touches no I/O.
func (w *World) Understand(text string) Reading {
	words := splitWords(text)
	if len(words) == 0 || len(words) > 24 {
		return Reading{}
	}
	toks := w.names1(words)
	var target *Target
	for _, t := range toks {
		if t.kind == kName {
			if target != nil && !sameTarget(*target, *t.t) {
				return Reading{} // two lights named: a sequence or a comparison
			}
			target = t.t
		}
	}
	lexed := w.lex(toks, w.statesOf(target))
	if target == nil && slices.ContainsFunc(lexed, func(t token) bool { return t.kind == kAll }) {
		// every light: the states they all have
		lexed = w.lex(toks, w.statesOf(&Target{All: true}))
	}
	return w.read(lexed, target)
}

func sameTarget(a, b Target) bool {
	return a.All == b.All && a.Group == b.Group && slices.Equal(a.Lights, b.Lights)
}

// splitWords is text's words for the understanding: lower case; _ and -
// between words; % a word of its own ("percent"); # kept on a hex color.
func splitWords(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			w := strings.Trim(b.String(), "'")
			if w != "" {
				out = append(out, w)
			}
			b.Reset()
		}
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '\'' || r == '’':
			if r == '’' {
				r = '\''
			}
			b.WriteRune(r)
		case r == '#':
			flush()
			b.WriteRune(r)
		case r == '%':
			flush()
			out = append(out, "percent")
		case r > 127 && (r >= 'à' && r <= 'ÿ'):
			b.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// names1 finds the names of the house in words, the longest first.
func (w *World) names1(words []string) []token {
	toks := make([]token, 0, len(words))
	for i := 0; i < len(words); {
		found := false
		for n := min(w.longest, len(words)-i); n >= 1; n-- {
			if t, ok := w.names[strings.Join(words[i:i+n], " ")]; ok && !w.insideColor(words, i, n) {
				tt := t
				toks = append(toks, token{kind: kName, word: strings.Join(words[i:i+n], " "), t: &tt})
				i += n
				found = true
				break
			}
		}
		if !found {
			toks = append(toks, token{word: words[i]})
			i++
		}
	}
	return toks
}

// insideColor: a name that is the end of a color's words is the color's
// ("light sea green" is no light named sea green).
func (w *World) insideColor(words []string, i, n int) bool {
	if i == 0 {
		return false
	}
	_, ok := color.Named(words[i-1] + strings.Join(words[i:i+n], ""))
	return ok && words[i-1] != "the"
}

// statesOf is the states every light of target has (the light spoken to
// for none), by their spoken names; off is power's, not a state's.
func (w *World) statesOf(target *Target) map[string]string {
	lights := []string{w.Self}
	if target != nil {
		lights = target.Lights
		if target.All {
			lights = w.Lights()
		}
	}
	var out map[string]string
	for _, l := range lights {
		n, ok := w.lights[l]
		if !ok {
			return nil
		}
		mine := map[string]string{}
		for _, s := range n.States {
			if s != "off" {
				mine[sayable(s)] = s
			}
		}
		if out == nil {
			out = mine
			continue
		}
		for k, v := range out {
			if mine[k] != v {
				delete(out, k)
			}
		}
	}
	return out
}

// lex reads the words between the names: states, colors, numbers and
// the lexicon's words and phrases, the longest first; a state beats a
// color of the same words.
func (w *World) lex(in []token, states map[string]string) []token {
	out := make([]token, 0, len(in))
	for i := 0; i < len(in); {
		if in[i].kind == kName {
			out = append(out, in[i])
			i++
			continue
		}
		// the words up to the next name
		j := i
		for j < len(in) && in[j].kind != kName && j-i < 4 {
			j++
		}
		best, used := token{word: in[i].word}, 1
		for n := j - i; n >= 1; n-- {
			ws := make([]string, n)
			for k := range ws {
				ws[k] = in[i+k].word
			}
			p := strings.Join(ws, " ")
			if s, ok := states[p]; ok {
				best, used = token{kind: kState, word: p, s: s}, n
				break
			}
			if t, ok := lexicon[p]; ok {
				t.word = p
				best, used = t, n
				break
			}
			if c, ok := colorOf(ws, prevWord(out)); ok {
				best, used = token{kind: kColor, word: p, s: c}, n
				break
			}
		}
		if best.kind == kUnknown {
			best = single(in[i].word)
		}
		out = append(out, best)
		i += used
	}
	return out
}

func prevWord(out []token) token {
	if len(out) == 0 {
		return token{}
	}
	return out[len(out)-1]
}

// colorOf is the color of words, named in the color table or #rrggbb,
// unless its first word is "light" right after "the" or a name: "turn
// the light blue" is the light, blue.
func colorOf(ws []string, prev token) (string, bool) {
	if len(ws) == 1 && strings.HasPrefix(ws[0], "#") {
		if c, err := color.Hex(ws[0]); err == nil {
			return c.Hex(), true
		}
		return "", false
	}
	if ws[0] == "light" && len(ws) > 1 && (prev.kind == kThe || prev.kind == kName) {
		return "", false
	}
	name := strings.Join(ws, " ")
	if _, ok := color.Named(name); !ok {
		return "", false
	}
	return name, true
}

// single reads one word the lexicon does not hold: a number, or a
// kelvin such as 2700k.
func single(w string) token {
	if n, ok := number(w); ok {
		return token{kind: kNumber, word: w, n: n}
	}
	if k, ok := strings.CutSuffix(w, "k"); ok {
		if n, err := strconv.Atoi(k); err == nil {
			return token{kind: kKelvin, word: w, n: n}
		}
	}
	return token{kind: kUnknown, word: w}
}

// number reads digits or a number word.
func number(w string) (int, bool) {
	if n, err := strconv.Atoi(w); err == nil && n >= 0 {
		return n, true
	}
	n, ok := numberWords[w]
	return n, ok
}

// read makes the command of the sentence's tokens, or sends it to the
// model.
func (w *World) read(toks []token, target *Target) Reading {
	toks = joinNumbers(toks)
	var (
		on, off, toggle, click, up, down, fade, slow, by, to, brightness, all bool
		step, abs, num, kelvin, fadeMs                                        = -1, -1, -1, -1, -1
		col, state                                                            string
		actions                                                               int
		percent                                                               bool
	)
	unknown := -1 // the first unknown word
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		next := kind(kUnknown)
		if i+1 < len(toks) {
			next = toks[i+1].kind
		}
		switch t.kind {
		case kUnknown:
			if unknown >= 0 && toks[i-1].kind != kUnknown {
				return Reading{} // two stretches of unknown words
			}
			if unknown < 0 {
				unknown = i
			}
		case kFiller, kNoun, kName, kThe, kSelf: // "it", "here": the light spoken to, as with no name
		case kAll:
			all = true
		case kOn:
			on = true
		case kOff:
			off = true
		case kToggle:
			toggle = true
		case kUp:
			up = true
		case kDown:
			down = true
		case kSmall, kBig:
			if step >= 0 && step != t.n {
				return Reading{}
			}
			step = t.n
		case kBrightness:
			brightness = true
		case kPercent:
			percent = true
		case kAbs:
			if abs >= 0 && abs != t.n {
				return Reading{}
			}
			abs = t.n
		case kTo:
			to = true
		case kAt:
			// "at 50%", "at half": a brightness; "at 7" is a time.
			if !(next == kAbs || next == kNumber && i+2 < len(toks) && toks[i+2].kind == kPercent) {
				return Reading{}
			}
			to = true
		case kBy:
			if next != kNumber {
				return Reading{}
			}
			by = true
		case kIn:
			// "in here", "in the kitchen", "in reading mode", "fade the
			// porch in"; "in 10 minutes" is a time.
			switch {
			case i == len(toks)-1 && fade:
				on = true
			case !(next == kName || next == kThe || next == kSelf || next == kFiller || next == kState || next == kColor):
				return Reading{}
			}
		case kFor:
			// "for the kitchen"; "for 10 minutes" is a time.
			if !(next == kName || next == kThe || next == kSelf || next == kAll) {
				return Reading{}
			}
		case kOver:
			// over N seconds|minutes|hours, over a minute
			if i+2 >= len(toks) || fadeMs >= 0 {
				return Reading{}
			}
			n, unit := toks[i+1], toks[i+2]
			if n.word == "a" || n.word == "an" {
				n.kind, n.n = kNumber, 1
			}
			if unit.word == "min" {
				unit.kind, unit.n = kUnit, 60_000
			}
			if n.kind != kNumber || unit.kind != kUnit || n.n > messages.MaxFadeMs/unit.n {
				return Reading{}
			}
			fadeMs = n.n * unit.n
			i += 2
		case kUnit:
			return Reading{} // a duration that is no fade's: a time
		case kSlow:
			slow = true
		case kFade:
			fade = true
		case kFadeIn:
			fade, on = true, true
		case kFadeOut:
			fade, off = true, true
		case kClick:
			click = true
		case kNumber:
			if next == kKelvin && toks[i+1].n < 0 { // 2700 kelvin
				if kelvin >= 0 {
					return Reading{}
				}
				kelvin = t.n
				i++
				continue
			}
			if num >= 0 {
				return Reading{}
			}
			num = t.n
		case kKelvin:
			if t.n < 0 || kelvin >= 0 {
				return Reading{}
			}
			kelvin = t.n
		case kColor:
			if col != "" && col != t.s {
				return Reading{}
			}
			col = t.s
		case kState:
			if state != "" && state != t.s {
				return Reading{}
			}
			state = t.s
		}
	}
	cmd := Command{}
	// what to do
	bright := up || down || abs >= 0 || num >= 0 || brightness
	switch {
	case toggle:
		cmd.Tool = ToolToggle
		actions++
	}
	if on && off {
		return Reading{}
	}
	if off {
		cmd.Tool, cmd.On = ToolPower, false
		actions++
	}
	if click {
		cmd.Tool, cmd.Fire = ToolFire, "button_click"
		actions++
	}
	if state != "" {
		cmd.Tool, cmd.State = ToolSetState, state
		actions++
	}
	if col != "" || kelvin >= 0 {
		if col != "" && kelvin >= 0 {
			return Reading{}
		}
		cmd.Tool, cmd.Color = ToolSetColor, col
		if kelvin >= 0 {
			if kelvin < color.MinKelvin || kelvin > color.MaxKelvin {
				return Reading{}
			}
			cmd.Kelvin = kelvin
		}
		actions++
	}
	if bright {
		cmd.Tool = ToolSetBrightness
		actions++
		switch {
		case up && down:
			return Reading{}
		case by || (num >= 0 && (up || down) && !to):
			// a step of num: "up by 20", "20% brighter"
			if num < 1 || num > 99 || abs >= 0 || !(up || down) || step >= 0 {
				return Reading{}
			}
			cmd.Delta = num
		case abs >= 0:
			if num >= 0 || step >= 0 {
				return Reading{}
			}
			cmd.Percent = abs
		case num >= 0:
			// an absolute percent needs "percent", "brightness" or "to"
			if !(percent || brightness || to) || num < 1 || num > 100 || step >= 0 {
				return Reading{}
			}
			cmd.Percent = num
		case up || down:
			cmd.Delta = 20
			if step >= 0 {
				cmd.Delta = step
			}
		default:
			return Reading{} // "brightness" alone
		}
		if down {
			cmd.Delta = -cmd.Delta
		}
	} else if num >= 0 || step >= 0 || by || percent {
		return Reading{}
	}
	if on {
		// "turn on party mode", "turn on the kitchen at 50%": the state,
		// color or brightness switches the light on too.
		if actions == 0 {
			cmd.Tool, cmd.On = ToolPower, true
			actions++
		}
	}
	if actions != 1 {
		return Reading{}
	}
	// how
	switch {
	case fadeMs >= 0:
		if fadeMs > messages.MaxFadeMs {
			return Reading{}
		}
		cmd.Fade, cmd.FadeMs = true, fadeMs
	case slow || fade:
		cmd.Fade, cmd.FadeMs = true, SlowFadeMs
	}
	if cmd.Fade && cmd.Tool == ToolFire {
		return Reading{}
	}
	if unknown >= 0 {
		return w.unknownName(toks, unknown)
	}
	// to what
	switch {
	case target != nil:
		cmd.Target = *target
	case all:
		cmd.Target = Target{All: true, Lights: w.Lights()}
	default:
		cmd.Target = Target{Lights: []string{w.Self}}
	}
	if cmd.Target.All && cmd.Tool == ToolFire {
		return Reading{}
	}
	return Reading{Outcome: Understood, Command: cmd}
}

// SlowFadeMs is the fade of "slowly", "gently", "fade to …".
const SlowFadeMs = 10_000

// unknownName: a command whose only unknown words, one to three in a
// row, stand where a name would ("the garage light", "in the attic") is
// about a light there is not. Any other unknown word sends it to the
// model.
func (w *World) unknownName(toks []token, at int) Reading {
	end := at
	for end < len(toks) && toks[end].kind == kUnknown {
		end++
	}
	if end-at > 3 {
		return Reading{}
	}
	var ws []string
	for _, t := range toks[at:end] {
		if phrase.NeedsModel(t.word) || modelWords[t.word] {
			return Reading{}
		}
		ws = append(ws, t.word)
	}
	before := at > 0 && (toks[at-1].kind == kThe || toks[at-1].kind == kIn)
	after := end < len(toks) && toks[end].kind == kNoun
	if !before && !after {
		return Reading{}
	}
	return Reading{Outcome: UnknownName, Unknown: strings.Join(ws, " ")}
}

// joinNumbers reads number words said in two ("twenty five") as one.
func joinNumbers(toks []token) []token {
	out := toks[:0:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind == kNumber && i+1 < len(toks) && toks[i+1].kind == kNumber {
			a, b := t.n, toks[i+1].n
			switch {
			case a >= 20 && a%10 == 0 && a < 100 && b > 0 && b < 10 && numberWords[t.word] > 0:
				t.n = a + b
				i++
			case a > 0 && a < 10 && b == 100 && toks[i+1].word == "hundred":
				t.n = a * 100
				i++
			}
		}
		out = append(out, t)
	}
	return out
}
