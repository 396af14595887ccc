// Package ws2812 encodes frames for a WS2812 (NeoPixel) strip driven from
// an SPI bus's MOSI line: at SPIHz every bit of the strip's protocol
// becomes three SPI bits, a 1 as 110 and a 0 as 100, so a high pulse lasts
// one or two thirds of the 1.25 µs bit. Pixels go out in the strip's
// G, R, B order, most significant bit first, and the frame ends with a
// reset latch: ResetMicros of zero bits.
//
// The package is pure: it knows nothing of the bus, which is the driver's
// (hardware/rpi).
package ws2812

import (
	"slices"

	"github.com/lumen-home/lumen/hardware"
)

// SPIHz is the SPI clock the encoding is made for: 3 SPI bits per
// 1.25 µs WS2812 bit.
const SPIHz = 2_400_000

// ResetMicros is how long the line stays low after the pixels so the strip
// latches them. The WS2812 datasheet asks for 50 µs, later WS2812B parts
// for 280 µs; 300 µs covers both at a cost of 90 bytes per frame.
const ResetMicros = 300

// resetBytes is ResetMicros of zero bits at SPIHz, rounded up to bytes.
const resetBytes = (ResetMicros*SPIHz/1_000_000 + 7) / 8

// bytesPerPixel is 3 colour bytes × 8 bits × 3 SPI bits / 8.
const bytesPerPixel = 9

// EncodedLen is the length of the SPI transfer for a frame of pixels.
func EncodedLen(pixels int) int {
	return pixels*bytesPerPixel + resetBytes
}

// Encode appends the SPI bytes of frame to dst and returns the extended
// slice. It does not allocate when dst has EncodedLen(len(frame)) bytes of
// room.
func Encode(dst []byte, frame []hardware.RGB) []byte {
	dst = slices.Grow(dst, EncodedLen(len(frame)))
	for _, p := range frame {
		dst = appendByte(dst, p.G)
		dst = appendByte(dst, p.R)
		dst = appendByte(dst, p.B)
	}
	for range resetBytes {
		dst = append(dst, 0)
	}
	return dst
}

// appendByte appends the 24 SPI bits (3 bytes) of one colour byte.
func appendByte(dst []byte, b byte) []byte {
	var bits uint32
	for i := 7; i >= 0; i-- {
		bits = bits<<3 | 0b100 | uint32(b>>i&1)<<1
	}
	return append(dst, byte(bits>>16), byte(bits>>8), byte(bits))
}
