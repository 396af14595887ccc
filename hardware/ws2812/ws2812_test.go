package ws2812_test

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/ws2812"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestEncodePixel(t *testing.T) {
	reset := make([]byte, ws2812.EncodedLen(0))
	tests := []struct {
		name  string
		given hardware.RGB
		want  string // hex of the 9 pixel bytes: G, R, B
	}{
		{"off", hardware.RGB{}, "924924" + "924924" + "924924"},
		{"white", hardware.RGB{R: 255, G: 255, B: 255}, "db6db6" + "db6db6" + "db6db6"},
		{"red is the second byte", hardware.RGB{R: 255}, "924924" + "db6db6" + "924924"},
		{"green is the first byte", hardware.RGB{G: 255}, "db6db6" + "924924" + "924924"},
		{"blue is the third byte", hardware.RGB{B: 255}, "924924" + "924924" + "db6db6"},
		{"msb first", hardware.RGB{G: 0x80, R: 0x01}, "d24924" + "924926" + "924924"},
		{"alternating", hardware.RGB{G: 0xAA, R: 0x55, B: 0x0F}, "d34d34" + "9a69a6" + "924db6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ws2812.Encode(nil, []hardware.RGB{tt.given})
			want, _ := hex.DecodeString(tt.want)
			want = append(want, reset...)
			if !bytes.Equal(got, want) {
				t.Errorf("Encode(%+v)\n got %x\nwant %x", tt.given, got, want)
			}
		})
	}
}

// decode reads the pixels back out of an encoding, checking that every
// 3-bit group is 100 or 110 and that the reset is all zeros.
func decode(t *testing.T, b []byte, pixels int) []hardware.RGB {
	t.Helper()
	bit := func(i int) int { return int(b[i/8]>>(7-i%8)) & 1 }
	colour := func(n int) uint8 { // the n-th colour byte
		var v uint8
		for i := range 8 {
			at := (n*8 + i) * 3
			if bit(at) != 1 || bit(at+2) != 0 {
				t.Fatalf("colour byte %d bit %d is %d%d%d, want 1x0", n, i, bit(at), bit(at+1), bit(at+2))
			}
			v = v<<1 | uint8(bit(at+1))
		}
		return v
	}
	out := make([]hardware.RGB, pixels)
	for p := range out {
		out[p] = hardware.RGB{G: colour(3 * p), R: colour(3*p + 1), B: colour(3*p + 2)}
	}
	for i, c := range b[pixels*9:] {
		if c != 0 {
			t.Fatalf("reset byte %d is %#x, want 0", i, c)
		}
	}
	return out
}

func TestEncodeRoundTrip(t *testing.T) {
	frame := make([]hardware.RGB, 256)
	for i := range frame {
		frame[i] = hardware.RGB{R: uint8(i), G: uint8(255 - i), B: uint8(i * 7)}
	}
	got := decode(t, ws2812.Encode(nil, frame), len(frame))
	for i := range frame {
		if got[i] != frame[i] {
			t.Fatalf("pixel %d: got %+v, want %+v", i, got[i], frame[i])
		}
	}
}

func TestEncodedLen(t *testing.T) {
	for _, n := range []int{0, 1, 3, 60, 300} {
		frame := make([]hardware.RGB, n)
		if got, want := len(ws2812.Encode(nil, frame)), ws2812.EncodedLen(n); got != want {
			t.Errorf("%d pixels: encoded %d bytes, EncodedLen says %d", n, got, want)
		}
	}
	reset := ws2812.EncodedLen(0)
	if d := time.Duration(reset*8) * time.Second / ws2812.SPIHz; d < 80*time.Microsecond {
		t.Errorf("reset latch is %v of zero bits, want at least 80µs", d)
	}
	if ws2812.EncodedLen(1)-reset != 9 {
		t.Errorf("a pixel is %d bytes, want 9 (24 bits × 3)", ws2812.EncodedLen(1)-reset)
	}
}

func TestEncodeAppends(t *testing.T) {
	frame := []hardware.RGB{{R: 1, G: 2, B: 3}, {R: 4, G: 5, B: 6}}
	prefix := []byte("head")
	got := ws2812.Encode(prefix, frame)
	if !bytes.HasPrefix(got, []byte("head")) || !bytes.Equal(got[4:], ws2812.Encode(nil, frame)) {
		t.Errorf("Encode did not append to dst: %x", got)
	}
	buf := make([]byte, 0, ws2812.EncodedLen(len(frame)))
	if allocs := testing.AllocsPerRun(100, func() { buf = ws2812.Encode(buf[:0], frame) }); allocs != 0 {
		t.Errorf("Encode into a buffer with room allocated %v times", allocs)
	}
}

// TestGolden pins the whole transfer of a 3-pixel frame: red, green, and a
// dim mixed colour.
func TestGolden(t *testing.T) {
	frame := []hardware.RGB{{R: 255}, {G: 255}, {R: 0x12, G: 0x34, B: 0x56}}
	got := ws2812.Encode(nil, frame)
	var text strings.Builder
	fmt.Fprintf(&text, "# ws2812.Encode of %d pixels at %d Hz: per pixel G R B, 3 SPI bytes each; then %d reset bytes\n",
		len(frame), ws2812.SPIHz, ws2812.EncodedLen(0))
	for p, px := range frame {
		b := got[p*9 : p*9+9]
		fmt.Fprintf(&text, "pixel %d r=%02x g=%02x b=%02x: %x %x %x\n", p, px.R, px.G, px.B, b[0:3], b[3:6], b[6:9])
	}
	fmt.Fprintf(&text, "reset: %x\n", got[len(frame)*9:])
	path := filepath.Join("testdata", "three_pixels.golden")
	if *update {
		if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if text.String() != string(want) {
		t.Errorf("encoding differs from %s (go test -update rewrites it)\n got:\n%s\nwant:\n%s", path, text.String(), want)
	}
}

func BenchmarkEncode60(b *testing.B) {
	frame := make([]hardware.RGB, 60)
	for i := range frame {
		frame[i] = hardware.RGB{R: uint8(i * 4), G: uint8(255 - i*4), B: uint8(i)}
	}
	buf := make([]byte, 0, ws2812.EncodedLen(len(frame)))
	b.SetBytes(int64(ws2812.EncodedLen(len(frame))))
	b.ReportAllocs()
	for b.Loop() {
		buf = ws2812.Encode(buf[:0], frame)
	}
}
