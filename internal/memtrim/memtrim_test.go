package memtrim

import (
	"os"
	"testing"
)

func TestParseSmaps(t *testing.T) {
	f, err := os.Open("testdata/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseSmaps(f, "fe:00", 1234)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		m         Mapping
		droppable bool
	}{
		{Mapping{Start: 0x400000, End: 0x404000, Perms: "r--p", Rss: 16 << 10}, true},
		{Mapping{Start: 0x404000, End: 0x3061000, Perms: "r-xp", Rss: 31664 << 10}, true},
		{Mapping{Start: 0x3061000, End: 0x5912000, Perms: "r--p", Rss: 31492 << 10}, true},
		// Relocated before it was made read-only: its copies must stay.
		{Mapping{Start: 0x5912000, End: 0x5988000, Perms: "r--p", Rss: 408 << 10, Anonymous: 120 << 10}, false},
		// Writable data.
		{Mapping{Start: 0x5988000, End: 0x5b66000, Perms: "rw-p", Rss: 1652 << 10, Anonymous: 1000 << 10}, false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d mappings of the file, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i] != w.m {
			t.Errorf("mapping %d = %+v, want %+v", i, got[i], w.m)
		}
		if d := got[i].Droppable(); d != w.droppable {
			t.Errorf("mapping %d (%s) droppable = %v, want %v", i, got[i].Perms, d, w.droppable)
		}
	}
}

func TestDroppable(t *testing.T) {
	for _, c := range []struct {
		perms string
		anon  int64
		want  bool
	}{
		{"r-xp", 0, true},
		{"r--p", 0, true},
		{"r--s", 0, false}, // shared: another process's writes
		{"rw-p", 0, false},
		{"rwxp", 0, false},
		{"r-xp", 4096, false},
		{"---p", 0, false},
		{"", 0, false},
	} {
		m := Mapping{Start: 0x1000, End: 0x2000, Perms: c.perms, Anonymous: c.anon}
		if got := m.Droppable(); got != c.want {
			t.Errorf("%q with %d anonymous bytes: Droppable = %v, want %v", c.perms, c.anon, got, c.want)
		}
	}
}
