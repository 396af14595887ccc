package main

import (
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/eval"
)

func newEval(a *app) *cobra.Command {
	cfg := eval.Config{Agent: daemon.DefaultConfig("").Agent, CaseTimeout: eval.DefaultCaseTimeout}
	var models []string
	var casesFile, everydayFile string
	var everyday bool
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Judge how well a model programs the light: a suite of requests, checked by what the light does",
		Long: `Run a suite of requests against an OpenAI-compatible model and judge each by
the light's behaviour afterwards, not by the words: each case starts a scratch
light of its own (a throwaway daemon in a temporary directory, on a clock the
case moves), sends the request through the real agent, then clicks, holds,
lets time pass, feeds data, MQTT and GPIO inputs, and checks the states, the
LED's colors, the variables, the tools and the sources that result. Cases also
check that the agent asks when a request is ambiguous, asks for approval
before destroying anything, and refuses what it cannot do. Your own lights,
journal and daemon are never touched.

The built-in suite (about 30 cases) covers every pattern of the library,
custom tools and transitions, push sources, multi-step requests, corrections
and direct commands (which the light carries out without the model). --cases
runs another suite file in the same format (see eval/cases.yaml).

For each case it prints pass or FAIL, the model's turns, the tokens the
endpoint reported, the seconds, and for a failure what differed; then a
summary per model. It exits 0 when the suite ran, whatever passed; 2 when no
model is given.

--everyday runs the everyday suite instead: the corpus of everyday commands
the light understands without a model (about 860 sentences, each said to the
light hall of a scratch house of eight lights, judged by what the lights do),
first without a model, then with each model given; --everyday-file runs
another corpus of the same house.`,
		Example: `  # Ollama on this machine
  lumen eval --openai-base-url http://localhost:11434/v1 --model llama3.1 --model qwen2.5
  # OpenAI (OPENAI_API_KEY in the environment)
  lumen eval --model gpt-4o-mini --repeat 3
  lumen eval --model gpt-4o-mini --case counter --case toggle --json > report.json
  # The everyday commands: the light's own understanding, then a model's
  lumen eval --everyday
  lumen eval --everyday --model gpt-4o-mini --parallel 4`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if everyday || everydayFile != "" {
				return a.EvalEveryday(cmd.Context(), cfg, models, everydayFile)
			}
			return a.Eval(cmd.Context(), cfg, models, casesFile)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&models, "model", nil, "a model to evaluate, e.g. gpt-4o-mini or llama3.1 (repeatable; default $LUMEN_MODEL)")
	agentFlags(f, &cfg.Agent)
	f.StringVar(&casesFile, "cases", "", "run the suite in `FILE` instead of the built-in one")
	f.BoolVar(&everyday, "everyday", false, "run the everyday suite: everyday commands without a model, then with each model given")
	f.StringVar(&everydayFile, "everyday-file", "", "run the everyday suite on the corpus in `FILE` (SENTENCE => EXPECTATION a line)")
	f.StringArrayVar(&cfg.Only, "case", nil, "run only the case `NAME` (repeatable)")
	f.IntVar(&cfg.Repeat, "repeat", 1, "run each case `N` times, to see how much a model varies")
	f.DurationVar(&cfg.CaseTimeout, "case-timeout", cfg.CaseTimeout, "the most one case may take, its requests and its checks")
	f.IntVar(&cfg.Parallel, "parallel", 1, "run `N` cases at once (a hosted model answers several at a time; a local one may not)")
	jsonFlag(cmd, a)
	return cmd
}
