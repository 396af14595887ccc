package rpi

import (
	"os/exec"
	"strings"
	"testing"
)

func TestDecodeFunc(t *testing.T) {
	// GPFSEL1 as the Pi boots with UART on 14/15 (alt0), 17 an output, 18
	// PWM (alt5) and 19 alt4.
	const reg = 0b011_010_001_000_100_100_000_000_000_000 // BCM 19 … 10
	want := map[int]PinFunc{10: FuncInput, 12: FuncInput, 14: FuncAlt0, 15: FuncAlt0, 16: FuncInput, 17: FuncOutput, 18: FuncAlt5, 19: FuncAlt4}
	for pin, f := range want {
		if got := decodeFunc(reg, pin); got != f {
			t.Errorf("BCM %d: %v, want %v", pin, got, f)
		}
	}
	if fselReg(17) != 1 || fselShift(17) != 21 || fselReg(9) != 0 || fselShift(27) != 21 || fselReg(27) != 2 {
		t.Error("function-select register or shift is wrong")
	}
	for f := FuncInput; f <= FuncAlt5; f++ {
		if got := decodeFunc(fselBits[f]<<fselShift(23), 23); got != f {
			t.Errorf("round trip of %v gave %v", f, got)
		}
	}
	if FuncAlt5.String() != "alt5" || PinFunc(9).String() != "invalid" {
		t.Error("PinFunc.String")
	}
}

func TestPeriphBase(t *testing.T) {
	tests := []struct {
		name   string
		ranges []byte
		want   int64
	}{
		{"pi 3", []byte{0x7e, 0, 0, 0, 0x3f, 0, 0, 0, 0x01, 0, 0, 0}, 0x3f00_0000},
		{"pi 4", []byte{0x7e, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0, 0, 0, 0x01, 0x80, 0, 0}, 0xfe00_0000},
		{"missing", nil, 0x2000_0000},
		{"short", []byte{0x7e, 0, 0}, 0x2000_0000},
	}
	for _, tt := range tests {
		if got := periphBase(tt.ranges); got != tt.want {
			t.Errorf("%s: %#x, want %#x", tt.name, got, tt.want)
		}
	}
}

// Only the build-tagged Board and Device import go-rpio: the package built
// for a PC (and so the simulator's users) never does.
func TestGoRPIOOnlyOnThePi(t *testing.T) {
	const rpio = "github.com/stianeikeland/go-rpio/v4"
	for _, tt := range []struct {
		goarch string
		want   bool
	}{{"amd64", false}, {"arm64", true}, {"arm", true}} {
		cmd := exec.Command("go", "list", "-deps", "github.com/lumen-home/lumen/hardware/rpi")
		cmd.Env = append(cmd.Environ(), "GOOS=linux", "GOARCH="+tt.goarch, "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list for %s: %v\n%s", tt.goarch, err, out)
		}
		if got := strings.Contains(string(out), rpio); got != tt.want {
			t.Errorf("linux/%s: imports go-rpio = %v, want %v", tt.goarch, got, tt.want)
		}
	}
}
