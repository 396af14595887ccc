package rpi

// PinFunc is a GPIO pin's function, as its function-select bits say.
type PinFunc uint8

// The functions of a pin; the Alt ones are its peripherals (PWM is Alt0 on
// BCM 12 and 13, Alt5 on 18 and 19; SPI0 is Alt0 on 7–11).
const (
	FuncInput PinFunc = iota
	FuncOutput
	FuncAlt0
	FuncAlt1
	FuncAlt2
	FuncAlt3
	FuncAlt4
	FuncAlt5
)

func (f PinFunc) String() string {
	if int(f) < len(funcNames) {
		return funcNames[f]
	}
	return "invalid"
}

var funcNames = [...]string{"input", "output", "alt0", "alt1", "alt2", "alt3", "alt4", "alt5"}

// fselBits are the 3-bit function-select codes of the BCM283x, by PinFunc.
var fselBits = [...]uint32{
	FuncInput: 0b000, FuncOutput: 0b001,
	FuncAlt0: 0b100, FuncAlt1: 0b101, FuncAlt2: 0b110, FuncAlt3: 0b111, FuncAlt4: 0b011, FuncAlt5: 0b010,
}

// fselReg and fselShift locate a pin's function-select bits: ten pins per
// 32-bit register, three bits each.
func fselReg(pin int) int   { return pin / 10 }
func fselShift(pin int) int { return pin % 10 * 3 }

// decodeFunc reads a pin's function from its function-select register.
func decodeFunc(reg uint32, pin int) PinFunc {
	bits := reg >> fselShift(pin) & 0b111
	for f, b := range fselBits {
		if b == bits {
			return PinFunc(f)
		}
	}
	return FuncInput // unreachable: every 3-bit code is a function
}

// Where the GPIO registers are: the peripherals' base address, as go-rpio
// finds it in /proc/device-tree/soc/ranges, plus the GPIO block's offset.
const (
	defaultPeriphBase = 0x2000_0000 // Pi 1, and go-rpio's fallback
	gpioOffset        = 0x20_0000
)

// periphBase finds the peripherals' base address in the bytes of
// /proc/device-tree/soc/ranges the way go-rpio does: the big-endian word at
// offset 4 (Pi 1–3), else at offset 8 (Pi 4), else the Pi 1's.
func periphBase(ranges []byte) int64 {
	for _, off := range []int{4, 8} {
		if len(ranges) >= off+4 {
			b := ranges[off : off+4]
			if v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]); v != 0 {
				return int64(v)
			}
		}
	}
	return defaultPeriphBase
}
