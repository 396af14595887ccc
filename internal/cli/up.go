package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/internal/memtrim"
	"github.com/lumen-home/lumen/internal/redact"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/broker"
)

// HomeFlag is --home LAT,LON.
type HomeFlag struct{ H **tool.Home }

func (f HomeFlag) String() string {
	if f.H == nil || *f.H == nil {
		return ""
	}
	return fmt.Sprintf("%g,%g", (*f.H).Lat, (*f.H).Lon)
}

func (f HomeFlag) Set(s string) error {
	lat, lon, ok := strings.Cut(s, ",")
	la, err1 := strconv.ParseFloat(strings.TrimSpace(lat), 64)
	lo, err2 := strconv.ParseFloat(strings.TrimSpace(lon), 64)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("give LAT,LON in degrees, e.g. 48.85,2.35")
	}
	*f.H = &tool.Home{Lat: la, Lon: lo}
	return nil
}

func (HomeFlag) Type() string { return "LAT,LON" }

// Up runs lumen up until ctx ends: cfg from the flags (groups given as
// --group flags), under the configuration file's settings.
func (t *Term) Up(ctx context.Context, cmd *cobra.Command, cfg daemon.Config, file string, groups []string) error {
	var err error
	if cfg.Groups, err = daemon.ParseGroups(groups); err != nil {
		return Usage(err)
	}
	final, err := loadUpConfig(cmd, cfg, file)
	if err != nil {
		return err
	}
	return t.runDaemon(ctx, final)
}

// loadUpConfig reads the configuration file under the flags that were
// given.
func loadUpConfig(cmd *cobra.Command, flags daemon.Config, file string) (daemon.Config, error) {
	keys := daemon.FlagKeys()
	var given []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if key, ok := keys[f.Name]; ok {
			given = append(given, key)
		}
	})
	cfg, err := daemon.LoadConfig(file, flags, given)
	if err != nil {
		return cfg, err
	}
	cfg.Agent.APIKey = os.Getenv("OPENAI_API_KEY")
	cfg.SourceMinInterval = sourceMinInterval(cmd.ErrOrStderr())
	if err := cfg.Validate(); errors.Is(err, daemon.ErrCreds) {
		return cfg, err // the creds, not how the command was called
	} else if err != nil {
		return cfg, Usage(err)
	}
	return cfg, nil
}

// runDaemon runs lumen up until ctx ends: the daemon, its ready line and
// where to reach it, the status line on a terminal.
func (t *Term) runDaemon(ctx context.Context, cfg daemon.Config) error {
	status := render.NewStatus(t.Stdout, cfg.Lights)
	cfg.Logf = logTo(t.Stderr)
	cfg.OnShow = func(light, state string, raw []hardware.RGB) { status.Show(light, state, raw) }
	if t.Self != "" {
		cfg.CompileGuest = compileGuestApart(t.Self, cfg.Logf)
	}
	d, err := daemon.New(cfg)
	if err != nil {
		return Usage(err)
	}
	defer d.Close()
	if err := d.Run(ctx); err != nil {
		return startError(err, cfg)
	}
	fmt.Fprintln(t.Stdout, describe.DaemonReady(d.URL(), cfg.Lights[0], d.WebhookURL(), d.MQTTAddr()))
	go func() {
		select {
		case <-d.Warmed():
		case <-ctx.Done():
			return
		}
		if _, err := memtrim.Release(); err != nil {
			cfg.Logf("%v", err)
		}
	}()
	<-ctx.Done()
	fmt.Fprintln(t.Stderr, describe.ShuttingDown())
	return d.Close()
}

// compileGuestApart compiles the tools' guest with this binary's hidden
// 'lumen tool precompile', in a child process, so that the compiler's
// memory leaves with it. The child dies with lumen: a killed daemon must
// not leave a compiler running.
func compileGuestApart(lumen string, logf func(string, ...any)) func(ctx context.Context, wasm, out string) error {
	return func(ctx context.Context, wasm, out string) error {
		cmd := exec.CommandContext(ctx, lumen, "tool", "precompile", "--wasm", wasm, "-o", out)
		if b, err := runTied(cmd); err != nil {
			if ctx.Err() != nil {
				return err // lumen is stopping
			}
			logf("tools: compiling in a child process failed (%v: %s); compiling in this process", err, strings.TrimSpace(string(b)))
			return err
		}
		return nil
	}
}

// startError turns a start that failed on a data dir or a port in use
// into which flag gave it and what to do. The daemon's own errors start
// with the flag (--http: …); the broker's say which of its listeners
// failed. Any other error is returned as it is.
func startError(err error, cfg daemon.Config) error {
	if errors.Is(err, broker.ErrDirInUse) {
		return fmt.Errorf("--data %s is in use by another lumen (lumen up, or lumen replay --data): stop it, or give this one another --data", cfg.Data)
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	flag, addr := "--listen", cfg.Listen
	switch msg := err.Error(); {
	case strings.HasPrefix(msg, "--http:"):
		flag, addr = "--http", cfg.HTTP
	case strings.Contains(msg, "MQTT"):
		flag, addr = "--mqtt", cfg.MQTT
	}
	host, _, _ := net.SplitHostPort(addr)
	return fmt.Errorf("%s %s: the port is taken (%w), by another lumen up or another program: stop it, or give this one another port; %s picks a free one, which lumen up prints once ready",
		flag, addr, syscall.EADDRINUSE, net.JoinHostPort(host, "0"))
}

// sourceMinInterval is $LUMEN_SOURCE_MIN_INTERVAL_MS, the shortest
// interval a data source may have, which exists for tests only: they
// cannot wait 10 s per fetch. 0 keeps the daemon's minimum.
func sourceMinInterval(stderr io.Writer) time.Duration {
	v := os.Getenv("LUMEN_SOURCE_MIN_INTERVAL_MS")
	ms, err := strconv.Atoi(v)
	if v != "" && (err != nil || ms <= 0) {
		fmt.Fprintln(stderr, describe.BadSourceMinInterval(v))
	}
	return time.Duration(max(ms, 0)) * time.Millisecond
}

// logTo is a daemon's log sink: one "lumen: " line each on w, with the
// passwords of the URLs it quotes redacted.
func logTo(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(w, "lumen: %s\n", redact.URLs(fmt.Sprintf(format, args...)))
	}
}
