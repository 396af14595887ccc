package cli

import (
	"testing"
	"time"
)

func TestParseWhen(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	now := time.Date(2026, 11, 25, 14, 30, 0, 0, paris)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"2026-11-25T08:00:00Z", time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC), false},
		{"08:00", time.Date(2026, 11, 25, 8, 0, 0, 0, paris), false},
		{"14:29:59", time.Date(2026, 11, 25, 14, 29, 59, 0, paris), false},
		{"14:30", now, false},
		// A time still to come today is yesterday's: the past is asked for.
		{"21:14:40", time.Date(2026, 11, 24, 21, 14, 40, 0, paris), false},
		{"14:31", time.Date(2026, 11, 24, 14, 31, 0, 0, paris), false},
		{"00:00:00", time.Date(2026, 11, 25, 0, 0, 0, 0, paris), false},
		{"8:05", time.Date(2026, 11, 25, 8, 5, 0, 0, paris), false},
		{"21:14:60", time.Time{}, true},
		{"21:14:40.5", time.Date(2026, 11, 24, 21, 14, 40, 5e8, paris), false},
		{"21:14:4", time.Time{}, true},
		{"90m", now.Add(-90 * time.Minute), false},
		{"0s", now, false},
		{"-5m", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"25:00", time.Time{}, true},
	} {
		got, err := parseWhen(tc.in, now)
		if (err != nil) != tc.err || !tc.err && !got.Equal(tc.want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}
