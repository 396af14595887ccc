package actors_test

import (
	"testing"

	"github.com/lumen-home/lumen/actors"
)

// A read asked for while one runs is made once that one is in, and only
// once however often it was asked.
func TestReader(t *testing.T) {
	var r actors.Reader
	started := make(chan struct{}, 4)
	read := func() { started <- struct{}{} }
	r.Read(read)
	<-started
	r.Read(read)
	r.Read(read)
	if !r.Reading() || len(started) != 0 {
		t.Fatal("a second read began while the first ran")
	}
	if !r.Done() {
		t.Fatal("the read asked for meanwhile is not made")
	}
	r.Read(read)
	<-started
	if r.Done() || r.Reading() {
		t.Fatal("read again with nothing asked")
	}
}
