// Command lumen runs a Lumen light (lumen up) and talks to running ones.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/internal/redact"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// This binary is lumen: lumen up may run it again as a child (to
	// compile the tools' guest). A test binary running commands in
	// process is not, and compiles in process.
	self, _ := os.Executable()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, func(a *app) { a.Self = self })
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit status: 0 success,
// 1 error, 2 usage.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, opts ...func(*app)) int {
	root := newRoot(stdin, stdout, stderr, opts...)
	root.SetArgs(cli.Negatives(args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	// Whatever an error quotes, a URL's password is not shown.
	fmt.Fprintf(stderr, "lumen: %s\n", redact.URLs(err.Error()))
	if errors.As(err, new(cli.UsageError)) {
		return 2
	}
	return 1
}

// app is the command line's terminal.
type app struct{ *cli.Term }

func newRoot(stdin io.Reader, stdout, stderr io.Writer, opts ...func(*app)) *cobra.Command {
	a := &app{Term: &cli.Term{Stdin: stdin, Stdout: stdout, Stderr: stderr}}
	for _, o := range opts {
		o(a)
	}
	root := &cobra.Command{
		Use:   "lumen",
		Short: "Lumen: a durable, agent-programmable ambient light",
		Long: `Lumen turns a Raspberry Pi with an RGB LED and a button into an ambient light
whose behaviour is a set of states and rules, journaled in NATS JetStream.

Start a light with 'lumen up', then drive it from another terminal with the
other commands (they connect to --server, default $NATS_URL or
nats://127.0.0.1:4222).`,
		Example: `  lumen up                         # run the demo light
  lumen fire button_click          # click it
  lumen tail                       # watch what it does`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Usage(err) })
	server := os.Getenv("NATS_URL")
	if server == "" {
		server = "nats://127.0.0.1:4222"
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.Server, "server", server, "NATS server of a running lumen (also $NATS_URL)")
	a.Timeout = cli.Duration(cli.DefaultTimeout)
	pf.Var(&a.Timeout, "timeout", "how long to wait for an answer")

	root.AddCommand(newUp(a), newFire(a), newState(a), newGet(a), newApply(a), newExport(a), newHistory(a), newDiff(a), newRollback(a), newWhy(a), newWhatIf(a), newJournal(a), newTail(a), newReplay(a), newPress(a), newGPIO(a), newPreview(a), newService(a), newSecret(a), newTool(a), newFunction(a), newAsk(a), newApproval(a, true), newApproval(a, false), newSessions(a), newTalk(a), newEval(a), newSource(a), newLs(a),
		newStates(a), newRules(a), newVars(a), newRule(a), newVar(a), newSchedule(a), newHub(a), newLayers(a), newLayer(a))
	root.AddCommand(newIntents(a), newNames(a), newPower(a, true), newPower(a, false), newToggle(a), newBrightness(a), newColor(a))
	return root
}

// args wraps a cobra argument check so its errors are usage errors.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return cli.Usage(err)
		}
		return nil
	}
}
