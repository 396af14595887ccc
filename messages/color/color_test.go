package color_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages/color"
)

// keywords is CSS Color 4's named colors, typed apart from the table so a
// name missing or misspelt there fails here.
var keywords = strings.Fields(`
aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue
blueviolet brown burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk
crimson cyan darkblue darkcyan darkgoldenrod darkgray darkgreen darkgrey darkkhaki
darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen
darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue
dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite
gold goldenrod gray green greenyellow grey honeydew hotpink indianred indigo ivory khaki
lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan
lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen
lightskyblue lightslategray lightslategrey lightsteelblue lightyellow lime limegreen linen
magenta maroon mediumaquamarine mediumblue mediumorchid mediumpurple mediumseagreen
mediumslateblue mediumspringgreen mediumturquoise mediumvioletred midnightblue mintcream
mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid
palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum
powderblue purple rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown
seagreen seashell sienna silver skyblue slateblue slategray slategrey snow springgreen
steelblue tan teal thistle tomato turquoise violet wheat white whitesmoke yellow yellowgreen`)

var whites = []string{"cool white", "daylight", "soft white", "warm white"}

func TestNames(t *testing.T) {
	if len(keywords) != 148 {
		t.Fatalf("the test's own list has %d keywords, want 148", len(keywords))
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(keywords), whites...)))
	got := color.Names()
	if !slices.Equal(got, want) {
		t.Errorf("Names() = %d names, want %d\n got %q\nwant %q", len(got), len(want), got, want)
	}
	got[0] = "scribbled"
	if color.Names()[0] == "scribbled" {
		t.Error("Names() shares its slice with the table")
	}
}

// odd spells a name the ways people type it.
func odd(name string) []string {
	var hyphens, spaced strings.Builder
	for i, r := range name {
		if i > 0 && i%3 == 0 {
			hyphens.WriteByte('-')
			spaced.WriteByte(' ')
		}
		hyphens.WriteRune(r)
		spaced.WriteRune(r)
	}
	return []string{
		name,
		strings.ToUpper(name),
		" " + strings.ToUpper(hyphens.String()) + " ",
		strings.ReplaceAll(spaced.String(), " ", "_"),
		spaced.String(),
		strings.ToUpper(name[:1]) + name[1:],
		strings.ReplaceAll(name, " ", ""),
	}
}

func TestNamedEveryName(t *testing.T) {
	for _, name := range append(slices.Clone(keywords), whites...) {
		want, ok := color.Named(name)
		if !ok {
			t.Errorf("Named(%q) is not found", name)
			continue
		}
		for _, s := range odd(name) {
			if got, ok := color.Named(s); !ok || got != want {
				t.Errorf("Named(%q) = %v, %v; want %v as for %q", s, got, ok, want, name)
			}
		}
	}
}

func TestNamed(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  string // hex, "" for not found
	}{
		{"orange", "orange", "#ffa500"},
		{"rebeccapurple", "rebeccapurple", "#663399"},
		{"lightseagreen spaced", "Light Sea Green", "#20b2aa"},
		{"lightseagreen hyphens", "light-sea-green", "#20b2aa"},
		{"goldenrod", "goldenrod", "#daa520"},
		{"css green is not x11 green", "green", "#008000"},
		{"css gray is not x11 gray", "gray", "#808080"},
		{"grey spelling", "GREY", "#808080"},
		{"purple", "purple", "#800080"},
		{"maroon", "maroon", "#800000"},
		{"cornflowerblue", "cornflower_blue", "#6495ed"},
		{"lightgoldenrodyellow", "Light Goldenrod Yellow", "#fafad2"},
		{"black", "black", "#000000"},
		{"white", "white", "#ffffff"},
		{"warm white", "warmwhite", "#ffa757"},
		{"soft white", "Soft-White", "#ffb16e"},
		{"cool white", "cool_white", "#ffcea6"},
		{"daylight", "DayLight", "#fffefa"},
		{"transparent is no color", "transparent", ""},
		{"currentcolor is no color", "currentcolor", ""},
		{"empty", "", ""},
		{"misspelt", "purpel", ""},
		{"hex is not a name", "#ffa500", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := color.Named(tt.given)
			if tt.want == "" {
				if ok {
					t.Errorf("Named(%q) = %v, want not found", tt.given, got)
				}
				return
			}
			if !ok || got.Hex() != tt.want {
				t.Errorf("Named(%q) = %s, %v; want %s", tt.given, got.Hex(), ok, tt.want)
			}
		})
	}
}

// TestSynonyms checks the names CSS gives the same color.
func TestSynonyms(t *testing.T) {
	pairs := [][2]string{{"aqua", "cyan"}, {"fuchsia", "magenta"}}
	for _, n := range keywords {
		if strings.Contains(n, "gray") {
			pairs = append(pairs, [2]string{n, strings.ReplaceAll(n, "gray", "grey")})
		}
	}
	if len(pairs) != 2+7 {
		t.Fatalf("%d synonym pairs, want 9", len(pairs))
	}
	for _, p := range pairs {
		a, _ := color.Named(p[0])
		b, ok := color.Named(p[1])
		if !ok || a != b {
			t.Errorf("%s = %s but %s = %s", p[0], a.Hex(), p[1], b.Hex())
		}
	}
}

func TestNearest(t *testing.T) {
	tests := []struct {
		name  string
		given string
		n     int
		want  []string
	}{
		{"cut short", "purpl", 3, []string{"purple", "mediumpurple", "rebeccapurple"}},
		{"cut short with a prefix", "lightblu", 1, []string{"lightblue"}},
		{"swapped letters", "pruple", 1, []string{"purple"}},
		{"a typo", "organe", 1, []string{"orange"}},
		{"a white by its first word", "warm", 1, []string{"warm white"}},
		{"spaced like a name", "Light Sea Gren", 1, []string{"lightseagreen"}},
		{"exact", "grey", 1, []string{"grey"}},
		{"none asked", "purpl", 0, nil},
		{"negative", "purpl", -1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := color.Nearest(tt.given, tt.n); !slices.Equal(got, tt.want) {
				t.Errorf("Nearest(%q, %d) = %q, want %q", tt.given, tt.n, got, tt.want)
			}
		})
	}
	if got := color.Nearest("zzz", 1000); len(got) != 152 {
		t.Errorf("Nearest(zzz, 1000) gives %d names, want all 152", len(got))
	}
	if got := color.Nearest("", 2); len(got) != 2 {
		t.Errorf("Nearest(\"\", 2) = %q, want 2 names", got)
	}
}

func TestKelvin(t *testing.T) {
	tests := []struct {
		name  string
		given int
		want  string
		err   string
	}{
		{"lowest", 1000, "#ff4400", ""},
		{"candle", 1900, "#ff8400", ""},
		{"warm white", 2700, "#ffa757", ""},
		{"daylight", 6500, "#fffefa", ""},
		{"where the fit changes", 6600, "#ffffff", ""},
		{"highest", 12000, "#bfd3ff", ""},
		{"below", 900, "", "color: kelvin 900 is out of range: give 1000 to 12000"},
		{"just below", 999, "", "color: kelvin 999 is out of range: give 1000 to 12000"},
		{"just above", 12001, "", "color: kelvin 12001 is out of range: give 1000 to 12000"},
		{"zero", 0, "", "color: kelvin 0 is out of range: give 1000 to 12000"},
		{"negative", -2700, "", "color: kelvin -2700 is out of range: give 1000 to 12000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := color.Kelvin(tt.given)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || !errors.Is(err, color.ErrOutOfRange) {
					t.Errorf("Kelvin(%d) = %v, %v; want error %q wrapping ErrOutOfRange", tt.given, got, err, tt.err)
				}
				return
			}
			if err != nil || got.Hex() != tt.want {
				t.Errorf("Kelvin(%d) = %s, %v; want %s", tt.given, got.Hex(), err, tt.want)
			}
		})
	}
}

// TestKelvinCurve checks the shape the brief asks of the curve: warm is
// orange, 6500 K near white, and hotter is never redder or less blue.
func TestKelvinCurve(t *testing.T) {
	warm, _ := color.Kelvin(2700)
	if warm.R != 255 || warm.B >= warm.G-50 {
		t.Errorf("2700 K = %v, want red 255 and blue well below green", warm)
	}
	day, _ := color.Kelvin(6500)
	if min(day.R, day.G, day.B) < 240 {
		t.Errorf("6500 K = %v, want every channel at least 240", day)
	}
	prev, _ := color.Kelvin(color.MinKelvin)
	for k := color.MinKelvin + 100; k <= color.MaxKelvin; k += 100 {
		c, err := color.Kelvin(k)
		if err != nil {
			t.Fatal(err)
		}
		if c.R > prev.R || c.B < prev.B {
			t.Errorf("%d K = %v after %v: redder or less blue than 100 K cooler", k, c, prev)
		}
		prev = c
	}
}

func TestHex(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  color.RGB
		err   bool
	}{
		{"with #", "#ffa500", color.RGB{255, 165, 0}, false},
		{"without #", "ffa500", color.RGB{255, 165, 0}, false},
		{"upper case", "#FFA500", color.RGB{255, 165, 0}, false},
		{"short", "#fa0", color.RGB{255, 170, 0}, false},
		{"short without #", "FA0", color.RGB{255, 170, 0}, false},
		{"spaces around", " #663399 ", color.RGB{102, 51, 153}, false},
		{"black", "#000", color.RGB{}, false},
		{"empty", "", color.RGB{}, true},
		{"only #", "#", color.RGB{}, true},
		{"not hex", "#ffa50g", color.RGB{}, true},
		{"too short", "#ffa5", color.RGB{}, true},
		{"too long", "#ffa50000", color.RGB{}, true},
		{"a sign", "#+ffa50", color.RGB{}, true},
		{"0x", "0xffa500", color.RGB{}, true},
		{"two #", "##fa0", color.RGB{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := color.Hex(tt.given)
			if tt.err {
				want := fmt.Sprintf("color: %q is no hex color: give #rrggbb or #rgb, like #ffa500 or #fa0", tt.given)
				if err == nil || err.Error() != want {
					t.Errorf("Hex(%q) = %v, %v; want error %q", tt.given, got, err, want)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Hex(%q) = %v, %v; want %v", tt.given, got, err, tt.want)
			}
		})
	}
}

func TestRGBHex(t *testing.T) {
	tests := []struct {
		given color.RGB
		want  string
	}{
		{color.RGB{255, 165, 0}, "#ffa500"},
		{color.RGB{}, "#000000"},
		{color.RGB{1, 2, 255}, "#0102ff"},
	}
	for _, tt := range tests {
		if got := tt.given.Hex(); got != tt.want {
			t.Errorf("%v.Hex() = %q, want %q", tt.given, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		given []string
		want  string // hex when err is ""
		err   string
	}{
		{"name", []string{"orange"}, "#ffa500", ""},
		{"name in capitals", []string{"ORANGE"}, "#ffa500", ""},
		{"two words as two args", []string{"warm", "white"}, "#ffa757", ""},
		{"two words as one arg", []string{"warm white"}, "#ffa757", ""},
		{"three words as three args", []string{"light", "sea", "green"}, "#20b2aa", ""},
		{"hex", []string{"#ffa500"}, "#ffa500", ""},
		{"hex without #", []string{"ffa500"}, "#ffa500", ""},
		{"short hex without #", []string{"fa0"}, "#ffaa00", ""},
		{"kelvin", []string{"2700K"}, "#ffa757", ""},
		{"kelvin lower case", []string{"2700k"}, "#ffa757", ""},
		{"kelvin spaced", []string{"2700", "K"}, "#ffa757", ""},
		{"rgb", []string{"255", "165", "0"}, "#ffa500", ""},
		{"rgb as one arg", []string{"255 165 0"}, "#ffa500", ""},
		{"rgb with commas", []string{"255,165,0"}, "#ffa500", ""},
		{"rgb with leading zeros", []string{"007", "0", "255"}, "#0700ff", ""},
		{"nothing", nil, "", "color: no color given: give a name, a hex, a temperature or r g b, like orange, #ffa500, 2700K or 255 165 0"},
		{"blank", []string{" "}, "", "color: no color given: give a name, a hex, a temperature or r g b, like orange, #ffa500, 2700K or 255 165 0"},
		{"unknown name", []string{"purpl"}, "", `color: no color named "purpl": did you mean purple, mediumpurple, rebeccapurple?`},
		{"unknown words", []string{"light", "blu"}, "", `color: no color named "light blu": did you mean lightblue, lightcyan, lightgray?`},
		{"kelvin too cold", []string{"900K"}, "", "color: kelvin 900 is out of range: give 1000 to 12000"},
		{"kelvin too hot", []string{"20000k"}, "", "color: kelvin 20000 is out of range: give 1000 to 12000"},
		{"kelvin huge", []string{"99999999999999999999K"}, "", "color: kelvin 99999999999999999999 is out of range: give 1000 to 12000"},
		{"bare number", []string{"2700"}, "", "color: a bare number 2700 is no color: write 2700K for a temperature, or three numbers for r g b"},
		{"channel too big", []string{"256", "0", "0"}, "", "color: red 256 is out of range: give 0 to 255"},
		{"channel negative", []string{"0", "-1", "0"}, "", "color: green -1 is out of range: give 0 to 255"},
		{"channel not a number", []string{"0", "0", "x"}, "", `color: blue "x" is not a number: give three numbers 0 to 255, like 255 165 0`},
		{"two numbers", []string{"255", "165"}, "", "color: 2 numbers are no color: give three, red green blue, each 0 to 255, like 255 165 0"},
		{"four numbers", []string{"1", "2", "3", "4"}, "", "color: 4 numbers are no color: give three, red green blue, each 0 to 255, like 255 165 0"},
		{"bad hex", []string{"#ffa50g"}, "", `color: "#ffa50g" is no hex color: give #rrggbb or #rgb, like #ffa500 or #fa0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := color.Parse(tt.given...)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("Parse(%q) = %v, %v; want error %q", tt.given, got, err, tt.err)
				}
				return
			}
			if err != nil || got.Hex() != tt.want {
				t.Errorf("Parse(%q) = %s, %v; want %s", tt.given, got.Hex(), err, tt.want)
			}
		})
	}
}

func TestParseUnknownError(t *testing.T) {
	_, err := color.Parse("make", "it", "purpl")
	var unknown *color.UnknownError
	if !errors.As(err, &unknown) {
		t.Fatalf("Parse = %v, want an *UnknownError", err)
	}
	if unknown.Name != "make it purpl" || len(unknown.Suggestions) != 3 {
		t.Errorf("UnknownError = %+v, want the name as given and 3 suggestions", unknown)
	}
	for _, args := range [][]string{{"900K"}, {"256", "0", "0"}} {
		if _, err := color.Parse(args...); !errors.Is(err, color.ErrOutOfRange) {
			t.Errorf("Parse(%q) = %v, want ErrOutOfRange", args, err)
		}
	}
}

func ExampleParse() {
	for _, args := range [][]string{{"orange"}, {"#fa0"}, {"255", "165", "0"}, {"warm", "white"}, {"2700K"}, {"purpl"}} {
		c, err := color.Parse(args...)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(strings.Join(args, " "), "=", c.Hex())
	}
	// Output:
	// orange = #ffa500
	// #fa0 = #ffaa00
	// 255 165 0 = #ffa500
	// warm white = #ffa757
	// 2700K = #ffa757
	// color: no color named "purpl": did you mean purple, mediumpurple, rebeccapurple?
}
