package agenttest_test

import (
	"testing"

	"github.com/lumen-home/lumen/agent/agenttest"
)

func TestCheckWAV(t *testing.T) {
	tone := agenttest.Tone(0.3)
	silence := append([]byte(nil), tone...)
	for i := 44; i < len(silence); i++ {
		silence[i] = 0
	}
	cases := []struct {
		name string
		wav  []byte
		ok   bool
	}{
		{"tone", tone, true},
		{"silence", silence, false},
		{"not a wav", []byte("hello, this is not audio at all, really not at all"), false},
		{"too short", agenttest.Tone(0.01), false},
	}
	for _, c := range cases {
		if err := agenttest.CheckWAV(c.wav); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
