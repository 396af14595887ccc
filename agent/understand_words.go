package agent

// The lexicon of the local understanding (understand.go): every word or
// phrase it knows besides the names of the house, the lights' states,
// the colors and the numbers. A word not here sends a sentence to the
// model. Phrases are space-joined words, at most four.

// lexicon is built once, read only.
var lexicon = buildLexicon()

func buildLexicon() map[string]token {
	m := map[string]token{}
	add := func(k kind, n int, phrases ...string) {
		for _, p := range phrases {
			m[p] = token{kind: k, n: n}
		}
	}
	// Politeness, filler and the verbs of asking.
	add(kFiller, 0, "please", "pls", "plz", "kindly", "can", "could", "would", "will", "you", "u", "me", "i", "i'd", "id",
		"want", "like", "need", "just", "now", "right now", "hey", "hi", "hello", "lumen", "ok", "okay", "thanks", "thank",
		"thank you", "thx", "cheers", "my", "our", "your", "a", "an", "of", "for me", "for us", "go ahead and", "let's", "lets",
		"mind", "be", "should be", "power", "turn", "set", "switch", "make", "change", "put", "get", "bring", "adjust", "go", "have",
		"mode", "color", "colour", "colors", "colours", "setting", "temperature", "color temperature",
		"shade", "hue", "all of", "quickly", "please and thank you", "would you please", "into", "using")
	add(kThe, 0, "the", "these", "those")
	add(kNoun, 0, "light", "lights", "lamp", "lamps", "bulb", "bulbs", "lighting", "lamp light", "button")
	add(kSelf, 0, "it", "here", "in here", "this light", "this lamp", "this room", "in this room", "this one", "in the room", "the room")
	add(kAll, 0, "all", "everything", "everywhere", "every light", "every lamp", "every room", "all rooms", "whole house",
		"the whole house", "entire house", "the entire house", "the house", "house", "all the lights", "all lights",
		"every single light", "each light", "all over the house", "throughout the house", "whole home", "the whole home", "home")
	add(kOn, 0, "on", "activate", "enable", "power on", "switch on", "light up")
	add(kOff, 0, "off", "deactivate", "disable", "kill", "out", "shut", "shut off", "cut", "power off", "power down",
		"switch off", "extinguish", "douse", "turn out")
	add(kToggle, 0, "toggle", "flip", "flick")
	add(kUp, 0, "brighter", "brighten", "up", "raise", "increase", "boost", "more light", "more brightness", "more bright",
		"higher", "lighter", "bump up", "crank up", "turn up")
	add(kDown, 0, "dimmer", "dim", "darker", "darken", "down", "lower", "decrease", "reduce", "less light", "less brightness",
		"less bright", "dial down", "bring down", "turn down", "tone down", "soften")
	add(kSmall, 10, "a bit", "a little", "a little bit", "bit", "little", "slightly", "a touch", "a tad", "tad", "a smidge",
		"a notch", "a hair", "somewhat", "just a bit", "a little more", "a bit more")
	add(kBig, 40, "a lot", "lot", "much", "way", "lots", "a lot more", "much more", "way more", "significantly", "a great deal", "heaps")
	add(kBrightness, 0, "brightness", "bright", "level", "brightness level", "intensity", "dimmer level")
	add(kPercent, 0, "percent", "per cent", "pct")
	add(kAbs, 50, "half", "half brightness", "halfway", "half way")
	add(kAbs, 25, "quarter", "a quarter", "quarter brightness")
	add(kAbs, 75, "three quarters", "three quarter")
	add(kAbs, 100, "max", "maximum", "full", "full brightness", "max brightness", "maximum brightness", "brightest",
		"all the way up", "as bright as possible", "as bright as it goes", "full blast", "full power")
	add(kAbs, 1, "min", "minimum", "lowest", "dimmest", "min brightness", "minimum brightness", "lowest setting",
		"all the way down", "as dim as possible", "as low as possible", "as dim as it goes")
	add(kTo, 0, "to", "up to", "down to")
	add(kAt, 0, "at")
	add(kBy, 0, "by")
	add(kIn, 0, "in", "inside")
	add(kFor, 0, "for")
	add(kOver, 0, "over", "over the next", "over the course of")
	add(kUnit, 1000, "second", "seconds", "sec", "secs", "s")
	add(kUnit, 60_000, "minute", "minutes", "mins")
	add(kUnit, 3_600_000, "hour", "hours", "hr", "hrs")
	add(kSlow, 0, "slowly", "gradually", "gently", "slow", "softly", "nice and slow", "smoothly", "bit by bit")
	add(kFade, 0, "fade", "fading", "fade to", "fade it", "transition")
	add(kFadeIn, 0, "fade in", "fade up")
	add(kFadeOut, 0, "fade out", "fade away", "fade off", "fade down")
	add(kClick, 0, "next", "click", "press", "push", "hit", "tap", "press the button", "click the button",
		"push the button", "hit the button", "tap the button", "button press", "next one", "the next one")
	m["kelvin"] = token{kind: kKelvin, n: -1}
	m["k"] = token{kind: kKelvin, n: -1}
	m["degrees kelvin"] = token{kind: kKelvin, n: -1}
	return m
}

// numberWords are the numbers people say in words.
var numberWords = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40,
	"fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
}

// modelWords are words never read as an unknown light's name: they make
// a request one for the model whatever follows.
var modelWords = map[string]bool{
	"twice": true, "thrice": true, "once": true, "blink": true, "flash": true, "pulse": true, "strobe": true,
	"rainbow": true, "cycle": true, "tomorrow": true, "tonight": true, "morning": true, "evening": true,
	"night": true, "sunset": true, "sunrise": true, "noon": true, "midnight": true, "yesterday": true,
	"previous": true, "same": true, "match": true, "were": true, "was": true, "it's": true,
	"cozy": true, "cosy": true, "nice": true, "romantic": true, "relaxing": true, "surprise": true,
}
