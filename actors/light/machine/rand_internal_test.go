package machine

import "testing"

// TestRandomStreams pins the numbers random() draws for an input and after
// a rule timed out: a journal replays them, so they may never change.
func TestRandomStreams(t *testing.T) {
	type stream struct {
		seq   uint64
		rekey bool // rekeyed after rule timed out, rather than seeded for the input
		rule  string
	}
	tests := []struct {
		name  string
		given stream
		want  [2]uint64 // the first two draws
		third float64   // the third, as random() gives it
	}{
		{"input 0", stream{seq: 0}, [2]uint64{0x11ede0f6e34bb124, 0x3366f471cb333a5c}, 0.7671322890900993},
		{"input 1", stream{seq: 1}, [2]uint64{0x3dba5ca7c87d4d1b, 0x46471d5bf05b3045}, 0.4313964397171215},
		{"input 42", stream{seq: 42}, [2]uint64{0x131eb026ab8dfa10, 0x46a01b15b73548eb}, 0.08307801019438843},
		{"input 2^40", stream{seq: 1 << 40}, [2]uint64{0x310a01e220986818, 0x6d035cbca1b0d13d}, 0.9659325577499316},
		{"rekey, empty rule id", stream{seq: 0, rekey: true}, [2]uint64{0x22a97faf24de5fe1, 0x566220cbdcf1c2dc}, 0.5961769452304965},
		{"rekey r1", stream{seq: 7, rekey: true, rule: "r1"}, [2]uint64{0x19b52d7b7859852, 0x19328ebb1e7fe669}, 0.08534762767100368},
		{"rekey night_mode", stream{seq: 123456, rekey: true, rule: "night_mode"}, [2]uint64{0xfef575f6c0d33633, 0xe903e6ffa8b9896}, 0.9329998871412176},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r inputRand
			if tt.given.rekey {
				r.rekey(tt.given.seq, tt.given.rule)
			} else {
				r.seed(tt.given.seq)
			}
			got := [2]uint64{r.Uint64(), r.Uint64()}
			third := r.Float64()
			if got != tt.want || third != tt.third {
				t.Errorf("draws %#x, %v; want %#x, %v", got, third, tt.want, tt.third)
			}
		})
	}
}
