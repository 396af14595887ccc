package daemon

import (
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// starting answers the commands of the lights that are still starting
// (each reads its snapshot and journal before it serves) with a 503 that
// says so, rather than leaving them without a responder, which a client
// reads as "no such light". Nothing is done for such a command, so it can
// be sent again.
type starting struct {
	mu   sync.Mutex
	subs map[string]*nats.Subscription
}

// answerStarting subscribes for lights on nc.
func answerStarting(nc *nats.Conn, lights []string) (*starting, error) {
	s := &starting{subs: map[string]*nats.Subscription{}}
	for _, name := range lights {
		msg := fmt.Sprintf("light %s is starting (it reads its journal); try again in a moment", name)
		sub, err := nc.Subscribe(subject.CmdPrefix(name)+".>", func(m *nats.Msg) {
			if m.Reply != "" {
				_ = wire.ReplyError(m, 503, msg)
			}
		})
		if err != nil {
			s.close()
			return nil, fmt.Errorf("daemon: answer for the lights while they start: %w", err)
		}
		s.subs[name] = sub
	}
	return s, nil
}

// served stops answering for light: called just before its service
// subscribes on the same connection, so the server never has both
// answer one request (a 503 for a command the light then carries out).
func (s *starting) served(light string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sub := s.subs[light]; sub != nil {
		_ = sub.Unsubscribe()
		delete(s.subs, light)
	}
}

// close stops answering for every light left.
func (s *starting) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, sub := range s.subs {
		_ = sub.Unsubscribe()
		delete(s.subs, name)
	}
}
