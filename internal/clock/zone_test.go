package clock

import (
	"errors"
	"testing"
)

func TestZoneName(t *testing.T) {
	link := func(target string) func(string) (string, error) {
		return func(string) (string, error) {
			if target == "" {
				return "", errors.New("not a link")
			}
			return target, nil
		}
	}
	for _, tc := range []struct {
		local, link string
		want        string
		ok          bool
	}{
		{"Europe/Paris", "", "Europe/Paris", true},                                  // TZ=Europe/Paris
		{"UTC", "", "UTC", true},                                                    // TZ= or no zone
		{"/usr/share/zoneinfo/America/New_York", "", "America/New_York", true},      // TZ=/path
		{"Local", "/usr/share/zoneinfo/Europe/Paris", "Europe/Paris", true},         // no TZ
		{"Local", "../usr/share/zoneinfo/Asia/Tokyo", "Asia/Tokyo", true},           // a relative link
		{"Local", "/var/db/timezone/zoneinfo/Europe/Berlin", "Europe/Berlin", true}, // macOS
		{"Local", "", "UTC", false},                                                 // a copied file
		{"Local", "/etc/mytime", "UTC", false},
		{"/etc/mytime", "", "UTC", false},
		{"Nowhere/Atlantis", "", "UTC", false},
	} {
		if got, ok := zoneName(tc.local, link(tc.link)); got != tc.want || ok != tc.ok {
			t.Errorf("zoneName(%q, link %q) = %q, %v; want %q, %v", tc.local, tc.link, got, ok, tc.want, tc.ok)
		}
	}
}
