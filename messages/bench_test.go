package messages_test

import (
	"encoding/json"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// A typical 200-byte output event.
var event200 = []byte(`{"v":1,"id":"kitchen:123456:1","type":"state","light":"kitchen","time":"2026-11-22T02:22:57.123456789Z","cause":123456,"data":{"from":"color/red","to":"color/green","rule":"r12","transition":"button_click","changed":true}}`)

func BenchmarkDecodeEnvelope(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(event200)))
	var e messages.Envelope
	for b.Loop() {
		if err := messages.DecodeEnvelope(event200, &e); err != nil {
			b.Fatal(err)
		}
	}
}

// The baseline: a reflective decode of the same event.
func BenchmarkDecodeEnvelopeReflect(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(event200)))
	type plain struct {
		V     int             `json:"v"`
		ID    string          `json:"id"`
		Type  string          `json:"type"`
		Light string          `json:"light"`
		Time  string          `json:"time"`
		Cause uint64          `json:"cause"`
		Data  json.RawMessage `json:"data"`
	}
	var p plain
	for b.Loop() {
		if err := json.Unmarshal(event200, &p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendEnvelope(b *testing.B) {
	b.ReportAllocs()
	var e messages.Envelope
	if err := messages.DecodeEnvelope(event200, &e); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	for b.Loop() {
		buf = messages.AppendEnvelope(buf[:0], &e)
	}
}
