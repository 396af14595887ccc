package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/source"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/web"
)

// webServer is the daemon's HTTP port (lumen up --http): the page, the
// API (package web) and the webhooks of data sources, under
// /hooks/<light>/<source>.
type webServer struct {
	ln   net.Listener
	srv  *http.Server
	nc   *nats.Conn // the door's own connection, as an outside client
	door *web.Server
	url  string
	done chan struct{} // closed when Serve has returned
}

// HTTP settings of Config.HTTP besides HOST:PORT.
const (
	// HTTPAuto serves on DefaultHTTP when that port is free, and
	// without HTTP (saying so) when it is not.
	HTTPAuto = "auto"
	// HTTPOff serves no HTTP.
	HTTPOff = "off"
	// DefaultHTTP is where HTTPAuto serves.
	DefaultHTTP = "127.0.0.1:8642"
)

// listenWeb binds addr (the listener is open before the ready line, so
// a taken port fails the start) without serving yet; with HTTPAuto a
// taken default port is logged and nil returned. A host that is not
// loopback needs the daemon's credentials, as --listen does.
func listenWeb(addr string, credentials bool, logf func(string, ...any)) (*webServer, error) {
	auto := addr == HTTPAuto
	if auto {
		addr = DefaultHTTP
	}
	if err := broker.CheckAddr("HTTP", addr, credentials); err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && auto {
		logf("http: %s is taken (another lumen?): running without the page and API; give --http HOST:PORT to choose a port", addr)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	w := &webServer{ln: ln, done: make(chan struct{}), srv: &http.Server{
		// Webhook senders are small devices and scripts on the LAN; a
		// slow or stuck one must not hold connections forever. (Event
		// streams lift the write deadline for themselves.)
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}}
	w.url = "http://" + reachable(ln.Addr())
	return w, nil
}

// handle sets what w serves: the page and API through their own
// connection to the broker, with an outside client's rights, and the
// hooks.
func (w *webServer) handle(b *broker.Broker, lights []string, user, password string, hooks *source.Hooks, logf func(string, ...any)) error {
	if w == nil {
		return nil
	}
	opts := []nats.Option{nats.Name("lumen-http")}
	if user != "" {
		opts = append(opts, nats.UserInfo(user, password))
	}
	nc, err := nats.Connect(b.ClientURL(), opts...)
	if err != nil {
		return fmt.Errorf("daemon: the HTTP door's connection: %w", err)
	}
	h, err := web.New(web.Config{NC: nc, Lights: lights, Hooks: hooks, User: user, Password: password, Logf: logf})
	if err != nil {
		nc.Close()
		return err
	}
	w.nc, w.door, w.srv.Handler = nc, h, h
	return nil
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
// "" when w is nil (no HTTP).
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
	if w.door != nil {
		w.door.Close()
	}
	if w.nc != nil {
		w.nc.Close()
	}
}
