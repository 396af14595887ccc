package main

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
