// Package memtrim gives back the pages of the program's own code and
// read-only data that its start-up touched and idling does not use.
//
// A lumen binary is about 120 MB, most of it code and tables of its
// dependencies (the NATS server, Wasmtime, the OpenAI client, …). Their
// package initialisation and the daemon's start touch about 50–65 MB of
// it, which stays mapped, and counted in the process's resident memory,
// although an idle light uses a fraction of it again. Those pages are
// clean copies of the file: dropping them from the process costs
// nothing now, and a page used again is mapped back from the page cache
// (or read again from the file) on its next use.
package memtrim

// Mapping is one read-only mapping of the program's file, as
// /proc/self/smaps describes it.
type Mapping struct {
	Start, End uintptr
	Perms      string // e.g. r-xp
	Rss        int64  // bytes resident
	Anonymous  int64  // bytes copied on write: never dropped
}

// Droppable says whether m may be given back: a read-only private
// mapping none of whose pages was ever written (copied on write), so
// that every page of it equals the file's.
func (m Mapping) Droppable() bool {
	return len(m.Perms) == 4 && m.Perms[0] == 'r' && m.Perms[1] == '-' && m.Perms[3] == 'p' && m.Anonymous == 0 && m.End > m.Start
}
