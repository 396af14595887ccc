package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/lumen-home/lumen/actors/source"
	"github.com/lumen-home/lumen/nats/broker"
)

// webServer is the daemon's HTTP port (lumen up --http): for now only the
// webhooks of data sources, under /hooks/<light>/<source>.
type webServer struct {
	ln    net.Listener
	srv   *http.Server
	hooks *source.Hooks
	url   string
	done  chan struct{} // closed when Serve has returned
}

// listenWeb binds addr (the listener is open before the ready line, so
// a taken port fails the start) without serving yet. A host that is not
// loopback needs the daemon's credentials, as --listen does: the hooks
// then require them, or the source's own token.
func listenWeb(addr string, hooks *source.Hooks, credentials bool) (*webServer, error) {
	if err := broker.CheckAddr("HTTP", addr, credentials); err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/hooks/", hooks)
	w := &webServer{ln: ln, hooks: hooks, done: make(chan struct{}), srv: &http.Server{
		Handler: mux,
		// Webhook senders are small devices and scripts on the LAN; a
		// slow or stuck one must not hold connections forever.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}}
	w.url = "http://" + reachable(ln.Addr())
	return w, nil
}

// reachable is addr as a client dials it: an unspecified host (0.0.0.0,
// ::) as 127.0.0.1, like the ready line's NATS URL.
func reachable(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}

// serve starts answering requests.
func (w *webServer) serve(logf func(string, ...any)) {
	if w == nil {
		return
	}
	go func() {
		defer close(w.done)
		if err := w.srv.Serve(w.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("http: %v", err)
		}
	}()
}

// URL is http://HOST:PORT, with the port picked when --http asked for 0;
// "" when w is nil (no --http).
func (w *webServer) URL() string {
	if w == nil {
		return ""
	}
	return w.url
}

// close stops accepting requests and waits a little for those under way.
func (w *webServer) close() {
	if w == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil {
		_ = w.srv.Close()
	}
	select {
	case <-w.done:
	default:
		_ = w.ln.Close() // never served
	}
}
