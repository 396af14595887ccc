package broker

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// logger adapts Config.Logf to server.Logger. It also forwards the first
// fatal message to Start, because the embedded server reports start-up
// failures (port in use, JetStream store unusable) only by logging them.
type logger struct {
	mu    sync.RWMutex // held while calling logf, so close can wait out calls
	logf  func(format string, args ...any)
	fatal chan string
	// link is the last error the server gave about a house link (a
	// refused login, a certificate, a dial), for HubLink's status.
	link atomic.Value // string
	// writeErr gets the server's first word of a critical write error
	// (a stream, a consumer or a store that could not write, e.g. the
	// disk was full), which the server keeps until JetStream is
	// reloaded: watchWrites takes it.
	writeErr chan string
}

func newLogger(logf func(format string, args ...any)) *logger {
	return &logger{logf: logf, fatal: make(chan string, 1), writeErr: make(chan string, 1)}
}

func (l *logger) log(level, format string, v []any) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.logf != nil {
		l.logf("nats: "+level+format, v...)
	}
}

// close stops forwarding. Once it returns Logf is never called again, so a
// test's t.Logf is safe after Shutdown.
func (l *logger) close() {
	l.mu.Lock()
	l.logf = nil
	l.mu.Unlock()
}

// Noticef logs a notice.
func (l *logger) Noticef(format string, v ...any) { l.log("", format, v) }

// Warnf logs a warning.
func (l *logger) Warnf(format string, v ...any) {
	l.noteLink(format, v)
	l.log("warning: ", format, v)
}

// noteLink keeps the server's last word about a house link.
func (l *logger) noteLink(format string, v []any) {
	msg := fmt.Sprintf(format, v...)
	if strings.Contains(strings.ToLower(msg), "leafnode") || strings.Contains(msg, "TLS") || strings.Contains(msg, "Authorization") {
		l.link.Store(msg)
	}
}

// Errorf logs an error.
func (l *logger) Errorf(format string, v ...any) {
	l.noteLink(format, v)
	l.noteWriteErr(format, v)
	l.log("error: ", format, v)
}

// noteWriteErr hands a critical write error to watchWrites.
func (l *logger) noteWriteErr(format string, v []any) {
	if !strings.Contains(strings.ToLower(format), "critical write error") {
		return
	}
	select {
	case l.writeErr <- fmt.Sprintf(format, v...):
	default: // one is waiting already
	}
}

// Debugf is dropped: the server is never started in debug mode.
func (l *logger) Debugf(string, ...any) {}

// Tracef is dropped: the server is never started in trace mode.
func (l *logger) Tracef(string, ...any) {}

// Fatalf logs the message and hands it to Start. Unlike the server's own
// loggers it never exits the process.
func (l *logger) Fatalf(format string, v ...any) {
	l.log("fatal: ", format, v)
	select {
	case l.fatal <- fmt.Sprintf(format, v...):
	default: // Start already has one reason to fail.
	}
}
