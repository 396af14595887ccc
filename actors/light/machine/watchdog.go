package machine

import (
	"errors"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// errTimeout and errMemory are the values the watchdog interrupts goja
// with.
var (
	errTimeout = errors.New("machine: expression ran out of time")
	errMemory  = errors.New("machine: expression used too much memory")
)

// maxEvalHeapGrowth bounds how much the heap may grow while one
// evaluation runs (a string doubled in a loop reaches gigabytes well
// within the time bound, and a Pi has 1 GB). goja has no memory limit, so
// the watchdog measures the heap on its ticks; an evaluation shorter than
// a tick is never measured, and costs nothing.
const maxEvalHeapGrowth = 64 << 20

// heapBytes is the memory held by heap objects, live or not yet swept.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchdog bounds every expression evaluation of one machine in time
// without a timer per evaluation: evaluations only bump a generation
// under a mutex, and one goroutine looks every tick at the evaluation
// in progress, interrupting the runtime once the same generation has
// been running for the timeout. The goroutine parks while the machine
// is idle, so an idle light costs no CPU.
type watchdog struct {
	vm      *goja.Runtime
	timeout time.Duration
	tick    time.Duration

	mu      sync.Mutex
	gen     uint64
	running bool
	parked  bool
	closed  bool

	wake chan struct{}
	stop chan struct{}
}

func newWatchdog(vm *goja.Runtime, timeout time.Duration) *watchdog {
	tick := timeout / 8
	tick = min(max(tick, time.Millisecond), 10*time.Millisecond)
	w := &watchdog{
		vm:      vm,
		timeout: timeout,
		tick:    tick,
		parked:  true,
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
	}
	go w.loop()
	return w
}

// begin marks the start of an evaluation.
func (w *watchdog) begin() {
	w.mu.Lock()
	w.gen++
	w.running = true
	if w.parked {
		w.parked = false
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	w.mu.Unlock()
}

// end marks the end of an evaluation and drops an interrupt that came too
// late to stop it, so that it cannot hit the next evaluation.
func (w *watchdog) end() {
	w.mu.Lock()
	w.running = false
	w.vm.ClearInterrupt()
	w.mu.Unlock()
}

// close stops the goroutine; it is idempotent.
func (w *watchdog) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.stop)
	}
}

func (w *watchdog) loop() {
	var (
		seenGen  uint64
		seenAt   time.Time
		seenHeap uint64 // 0: not measured yet for seenGen
		idle     int
	)
	t := time.NewTimer(w.tick)
	t.Stop()
	for {
		// Parked: wait for an evaluation to begin.
		select {
		case <-w.wake:
		case <-w.stop:
			return
		}
		w.mu.Lock()
		seenGen, seenAt, seenHeap, idle = w.gen, time.Now(), 0, 0
		w.mu.Unlock()
		t.Reset(w.tick)
	active:
		for {
			select {
			case <-t.C:
			case <-w.stop:
				t.Stop()
				return
			}
			now := time.Now()
			w.mu.Lock()
			switch {
			case w.gen != seenGen:
				seenGen, seenAt, seenHeap, idle = w.gen, now, 0, 0
			case w.running:
				idle = 0
				switch heap := heapBytes(); {
				case now.Sub(seenAt) >= w.timeout:
					w.vm.Interrupt(errTimeout)
				case seenHeap == 0:
					seenHeap = heap
				case heap > seenHeap+maxEvalHeapGrowth:
					w.vm.Interrupt(errMemory)
				}
			default:
				idle++
			}
			if idle >= 4 && !w.running {
				w.parked = true
				w.mu.Unlock()
				break active
			}
			w.mu.Unlock()
			t.Reset(w.tick)
		}
	}
}
