// Package solar computes sunrise, sunset and civil dawn and dusk at a place
// from NOAA's solar position equations (the NOAA Solar Calculator and its
// spreadsheets, after Meeus' Astronomical Algorithms): no network, no
// clock, no tables, so a schedule like "sunrise -30m" is computed the same
// way at run time and when a journal is replayed.
//
// NOAA states its sunrise and sunset are accurate to within a minute
// between ±72° latitude and to within ten minutes beyond. Observed times
// differ further with the weather, the horizon and the elevation, which
// these equations ignore (a flat horizon at sea level, standard
// refraction).
//
// Latitudes are degrees north (south negative), longitudes degrees east
// (west negative). Results are UTC instants rounded to the second: the
// same inputs give the same instant on every run, and a last-bit difference
// in floating point on another CPU (a fused multiply-add) could change one
// only if it fell within about a picosecond of a half second.
package solar

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Event is a moment of the sun's daily course.
type Event string

const (
	// Sunrise is when the sun's upper edge rises over a flat horizon: its
	// centre 0.833° below it (0.567° of refraction and the sun's radius).
	Sunrise Event = "sunrise"
	// Sunset is the evening counterpart of Sunrise.
	Sunset Event = "sunset"
	// Dawn is the start of morning civil twilight: the sun's centre 6°
	// below the horizon, rising.
	Dawn Event = "dawn"
	// Dusk is the end of evening civil twilight: the sun's centre 6° below
	// the horizon, setting.
	Dusk Event = "dusk"
)

// ParseEvent reads an event's name, in any case.
func ParseEvent(s string) (Event, error) {
	ev := Event(strings.ToLower(strings.TrimSpace(s)))
	if _, ok := ev.zenith(); !ok {
		return "", fmt.Errorf("solar: unknown event %q: use sunrise, sunset, dawn or dusk", s)
	}
	return ev, nil
}

// zenith is the angle from the zenith of the sun's centre at ev, in
// degrees, and whether ev is a known event.
func (ev Event) zenith() (float64, bool) {
	switch ev {
	case Sunrise, Sunset:
		return 90.833, true
	case Dawn, Dusk:
		return 96, true
	}
	return 0, false
}

// morning says whether ev happens before solar noon.
func (ev Event) morning() bool { return ev == Sunrise || ev == Dawn }

// Check says whether lat and lon are a place on Earth.
func Check(lat, lon float64) error {
	if !(lat >= -90 && lat <= 90) { // also refuses NaN
		return fmt.Errorf("solar: latitude %v is out of range: give degrees between -90 (south pole) and 90 (north pole)", lat)
	}
	if !(lon >= -180 && lon <= 180) {
		return fmt.Errorf("solar: longitude %v is out of range: give degrees between -180 and 180, east positive", lon)
	}
	return nil
}

// Time returns the instant of ev on a date at the place (lat, lon), and
// false when the sun does not reach ev's altitude that day (polar day or
// night), when ev is unknown or when the place fails Check.
//
// The date is a day of the place's mean solar time, UTC shifted by lon/15
// hours, not of UTC nor of a time zone: Honolulu's sunset on 1 June is the
// one of its evening of 1 June (UTC 2 June), Auckland's sunrise on 1 June
// that of its morning of 1 June (UTC 31 May). These events fall far from
// midnight except near the poles, so this is also the date on the place's
// own clock, whatever its time zone.
func Time(ev Event, year int, month time.Month, day int, lat, lon float64) (time.Time, bool) {
	zen, ok := ev.zenith()
	if !ok || Check(lat, lon) != nil {
		return time.Time{}, false
	}
	// base is 00:00 UTC of the date; event times are minutes after it.
	base := time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
	baseJD := float64(base.Unix())/86400 + unixJD

	// Start at the place's mean noon, then recompute the sun's position at
	// each estimate: the second pass is within seconds, the third settles.
	minutes := 720 - 4*lon
	for range 3 {
		decl, eot := sun(baseJD + minutes/1440)
		ha, ok := hourAngle(zen, lat, decl)
		if !ok {
			return time.Time{}, false
		}
		noon := 720 - 4*lon - eot
		if ev.morning() {
			minutes = noon - 4*ha
		} else {
			minutes = noon + 4*ha
		}
	}
	return base.Add(time.Duration(math.Round(minutes*60)) * time.Second), true
}

// Next returns the first instant of ev plus offset strictly after after,
// searching the days from the one of after up to 400 days ahead and
// skipping days without ev (a polar night has no sunrise). It returns false
// when no such instant is in that window, or when Time would for every day
// (an unknown event, a place that fails Check).
//
// offset moves the moment: "sunrise -30m" is Next(Sunrise, t, lat, lon,
// -30*time.Minute).
func Next(ev Event, after time.Time, lat, lon float64, offset time.Duration) (time.Time, bool) {
	if _, ok := ev.zenith(); !ok || Check(lat, lon) != nil {
		return time.Time{}, false
	}
	// The day, in mean solar time, of the event instant that would land on
	// after. The event of a day may fall up to about half an hour into the
	// day before (a sunrise just after local midnight, early by the
	// equation of time), so start a day earlier.
	local := after.Add(-offset).UTC().Add(time.Duration(lon / 15 * float64(time.Hour)))
	y, m, d := local.Date()
	for i := -1; i <= 400; i++ {
		t, ok := Time(ev, y, m, d+i, lat, lon)
		if !ok {
			continue
		}
		if t = t.Add(offset); t.After(after) {
			return t, true
		}
	}
	return time.Time{}, false
}

// unixJD is the Julian day of the Unix epoch.
const unixJD = 2440587.5

// sun returns the sun's declination in degrees and the equation of time in
// minutes at the Julian day jd, by NOAA's equations.
func sun(jd float64) (decl, eot float64) {
	t := (jd - 2451545) / 36525 // Julian centuries since J2000.0
	l0 := math.Mod(280.46646+t*(36000.76983+t*0.0003032), 360)
	m := 357.52911 + t*(35999.05029-t*0.0001537)
	e := 0.016708634 - t*(0.000042037+t*0.0000001267)
	mr := rad(m)
	center := math.Sin(mr)*(1.914602-t*(0.004817+t*0.000014)) +
		math.Sin(2*mr)*(0.019993-t*0.000101) +
		math.Sin(3*mr)*0.000289
	omega := rad(125.04 - 1934.136*t)
	lambda := l0 + center - 0.00569 - 0.00478*math.Sin(omega) // apparent longitude
	eps0 := 23 + (26+(21.448-t*(46.815+t*(0.00059-t*0.001813)))/60)/60
	eps := rad(eps0 + 0.00256*math.Cos(omega)) // obliquity, corrected
	decl = deg(math.Asin(math.Sin(eps) * math.Sin(rad(lambda))))

	y := math.Tan(eps / 2)
	y *= y
	l0r := rad(l0)
	eot = 4 * deg(y*math.Sin(2*l0r)-2*e*math.Sin(mr)+
		4*e*y*math.Sin(mr)*math.Cos(2*l0r)-
		0.5*y*y*math.Sin(4*l0r)-
		1.25*e*e*math.Sin(2*mr))
	return decl, eot
}

// hourAngle returns the sun's hour angle in degrees when its centre is zen
// degrees from the zenith, at latitude lat with declination decl, and
// false when the sun stays above or below that all day.
func hourAngle(zen, lat, decl float64) (float64, bool) {
	latr, declr := rad(lat), rad(decl)
	c := math.Cos(rad(zen))/(math.Cos(latr)*math.Cos(declr)) - math.Tan(latr)*math.Tan(declr)
	if !(c >= -1 && c <= 1) { // also a pole, where the cosines make ±Inf or NaN
		return 0, false
	}
	return deg(math.Acos(c)), true
}

func rad(d float64) float64 { return d * math.Pi / 180 }
func deg(r float64) float64 { return r * 180 / math.Pi }
