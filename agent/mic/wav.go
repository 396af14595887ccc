package mic

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// WAV wraps 16-bit little-endian mono PCM at rate in a WAV file.
func WAV(pcm []byte, rate int) []byte {
	b := make([]byte, 44, 44+len(pcm))
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+len(pcm)))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16) // the fmt chunk's size
	binary.LittleEndian.PutUint16(b[20:], 1)  // PCM
	binary.LittleEndian.PutUint16(b[22:], 1)  // mono
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*2)) // bytes a second
	binary.LittleEndian.PutUint16(b[32:], 2)              // bytes a frame
	binary.LittleEndian.PutUint16(b[34:], 16)             // bits a sample
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(len(pcm)))
	return append(b, pcm...)
}

// Format is a WAV's sample format.
type Format struct {
	Rate, Channels, Bits int
}

// ReadWAV returns the samples of a PCM WAV file (interleaved, as stored)
// and their format. A data chunk longer than the file, as streaming
// writers like espeak-ng --stdout leave it, runs to the file's end.
func ReadWAV(b []byte) (pcm []byte, f Format, err error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, f, fmt.Errorf("mic: not a WAV file (%d bytes)", len(b))
	}
	for off := 12; off+8 <= len(b); {
		id, size := string(b[off:off+4]), int(binary.LittleEndian.Uint32(b[off+4:off+8]))
		body := b[off+8:]
		if size < 0 || size > len(body) {
			size = len(body)
		}
		switch id {
		case "fmt ":
			if size < 16 || binary.LittleEndian.Uint16(body) != 1 {
				return nil, f, errors.New("mic: WAV: not PCM")
			}
			f = Format{Channels: int(binary.LittleEndian.Uint16(body[2:])), Rate: int(binary.LittleEndian.Uint32(body[4:])),
				Bits: int(binary.LittleEndian.Uint16(body[14:]))}
		case "data":
			if f.Rate == 0 {
				return nil, f, errors.New("mic: WAV: data before its format")
			}
			return body[:size], f, nil
		}
		off += 8 + size + size%2
	}
	return nil, f, errors.New("mic: WAV: no data chunk")
}
