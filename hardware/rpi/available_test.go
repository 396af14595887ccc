package rpi

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAvailable(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // path under root → content
		want  bool
	}{
		{"pi 3 with /dev/mem (QEMU raspi3b)", map[string]string{"dev/mem": "", "proc/device-tree/model": "Raspberry Pi 3 Model B\x00"}, true},
		{"pi 4 with gpiomem", map[string]string{"dev/gpiomem": "", "proc/device-tree/model": "Raspberry Pi 4 Model B Rev 1.4\x00"}, true},
		{"pi zero 2", map[string]string{"dev/gpiomem": "", "proc/device-tree/model": "Raspberry Pi Zero 2 W Rev 1.0\x00"}, true},
		{"pi 5: RP1, unknown to go-rpio", map[string]string{"dev/gpiomem0": "", "dev/mem": "", "proc/device-tree/model": "Raspberry Pi 5 Model B Rev 1.0\x00"}, false},
		{"pi 500", map[string]string{"dev/mem": "", "proc/device-tree/model": "Raspberry Pi 500 Rev 1.0\x00"}, false},
		{"other board", map[string]string{"dev/mem": "", "proc/device-tree/model": "Pine64 RockPro64 v2.1\x00"}, false},
		{"no device tree (a PC)", map[string]string{"dev/mem": ""}, false},
		{"a pi without GPIO devices (a container)", map[string]string{"proc/device-tree/model": "Raspberry Pi 4 Model B\x00"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, content := range tt.files {
				p = filepath.Join(root, p)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := available(root); got != tt.want {
				t.Errorf("available = %v, want %v", got, tt.want)
			}
		})
	}
}
