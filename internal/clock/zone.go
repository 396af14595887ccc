package clock

import (
	"os"
	"strings"
	"time"
)

// Zone is the IANA name of the daemon's time zone, the one time.Local
// (and so the expressions' Date) uses: $TZ, else the zone /etc/localtime
// links to. A light journals it with each schedule created without a tz,
// so that replay and whatif read the zone instead of the machine's.
// time.Local.String() is only "Local" when the zone comes from
// /etc/localtime, a name that means nothing elsewhere; ok is false when
// no IANA name is found (a copied /etc/localtime, TZ naming a file
// outside zoneinfo): the name is then UTC. (Go reads a TZ it cannot load,
// such as the rule CET-1CEST, as UTC, and so does this.)
func Zone() (name string, ok bool) {
	return zoneName(time.Local.String(), os.Readlink)
}

// zoneName finds the IANA name of the local zone called local (what
// time.Local.String() says), reading /etc/localtime's link with readlink.
func zoneName(local string, readlink func(string) (string, error)) (string, bool) {
	name := local
	if name == "Local" {
		target, err := readlink("/etc/localtime")
		if err != nil {
			return "UTC", false
		}
		name = target
	}
	// A path (TZ=/usr/share/zoneinfo/Europe/Paris, or the link's target)
	// names its zone after the zoneinfo directory.
	if i := strings.LastIndex(name, "zoneinfo/"); i >= 0 {
		name = name[i+len("zoneinfo/"):]
	}
	if name == "" || name == "Local" || strings.HasPrefix(name, "/") {
		return "UTC", false
	}
	if _, err := time.LoadLocation(name); err != nil {
		return "UTC", false
	}
	return name, true
}
