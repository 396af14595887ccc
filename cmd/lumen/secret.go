package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/plugins/secrets"
)

func newSecret(a *app) *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Keep the secrets custom tools may send, each bound to its hosts",
		Long: `Keep API keys, tokens and device passwords for custom tools. A tool never holds
a value: it names the secret, as in the header
  Authorization: Bearer {{secret:OPENWEATHER_KEY}}
and lumen fills it in only for a request to a host you bound the secret to.
Responses are redacted before the tool sees them, and the journal, replies
and logs only ever show "[secret NAME]".

The values are kept in DATA/secrets/secrets.json, mode 0600 in a directory of
mode 0700: other users cannot read them, root can. These commands work on
--data directly, so they work with the light stopped; a running 'lumen up'
reloads the file. Run them as the user that runs 'lumen up' (root for
'lumen service install', so sudo) and with its --data.`,
		Example: `  lumen secret set OPENWEATHER_KEY --host api.openweathermap.org   # type the value, then Enter
  pass show weather | lumen secret set OPENWEATHER_KEY --host api.openweathermap.org
  lumen secret ls
  sudo lumen secret rm OPENWEATHER_KEY --data /var/lib/lumen`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if f := cmd.Flag("server"); f != nil && f.Changed {
				return cli.Usage(fmt.Errorf("lumen secret works on the daemon's data directory (--data, now %s), not over --server; run it where lumen up runs", data))
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Usage(err) })
	cmd.PersistentFlags().StringVar(&data, "data", daemon.DataDir(), "data directory of the light (lumen up --data); secrets are in DATA/secrets")
	cmd.AddCommand(newSecretSet(a, &data), newSecretLs(a, &data), newSecretRm(a, &data))
	return cmd
}

func newSecretSet(a *app, data *string) *cobra.Command {
	var hosts []string
	cmd := &cobra.Command{
		Use:   "set NAME --host HOST [--host HOST]…",
		Short: "Store a secret, read from standard input, bound to the hosts it may be sent to",
		Long: `Store the secret NAME (upper-case letters, digits and '_', like
OPENWEATHER_KEY), replacing any of that name. The value is read from standard
input, never from an argument or a flag, so it stays out of the shell history:
on a terminal, type it (it is not shown) and press Enter; otherwise pipe it
in (one trailing newline is dropped).

--host binds it to a host it may be sent to: a host name or an IP address,
which matches any port, or HOST:PORT, which matches only that port. Repeat
--host for several; a request anywhere else that names the secret fails
without being sent.`,
		Example: `  lumen secret set OPENWEATHER_KEY --host api.openweathermap.org
  lumen secret set HUE_TOKEN --host 192.168.1.20 < hue-token.txt
  printf %s "$TOKEN" | lumen secret set GITHUB_TOKEN --host api.github.com --host uploads.github.com`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := secrets.ValidName(name); err != nil {
				return cli.Usage(err)
			}
			if len(hosts) == 0 {
				return cli.Usage(fmt.Errorf("set needs --host HOST: the host the secret %s may be sent to", name))
			}
			canon := make([]string, 0, len(hosts))
			for _, h := range hosts {
				c, err := secrets.NormalizeHost(h)
				if err != nil {
					return cli.Usage(fmt.Errorf("--host: %w", err))
				}
				canon = append(canon, c)
			}
			st, err := secrets.Open(secrets.Dir(*data))
			if err != nil {
				return err
			}
			value, err := secrets.ReadValue(cmd.Context(), a.Stdin, a.Stderr, name)
			if err != nil {
				return secretError(err)
			}
			if err := st.Set(name, canon, value); err != nil {
				return secretError(err)
			}
			fmt.Fprintf(a.Stdout, "secret %s set for %s in %s\n", name, strings.Join(canon, ", "), st.Path())
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&hosts, "host", nil, "a host the secret may be sent to: HOST or HOST:PORT (repeat for several)")
	return cmd
}

func newSecretLs(a *app, data *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the secrets: names, hosts and when they were set, never values",
		Long: `List the secrets kept in DATA/secrets: each one's name, the hosts it may be
sent to, and when it was set. Values are never shown; to see one, read the
file as its owner.`,
		Example: `  lumen secret ls
  sudo lumen secret ls --data /var/lib/lumen --json`,
		Args: args(cobra.NoArgs),
		RunE: func(_ *cobra.Command, _ []string) error {
			list, err := secrets.List(secrets.Dir(*data))
			if err != nil {
				return err
			}
			if a.JSON {
				b, err := json.MarshalIndent(list, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(a.Stdout, "%s\n", b)
				return err
			}
			if len(list) == 0 {
				fmt.Fprintf(a.Stdout, "no secrets in %s; add one with 'lumen secret set NAME --host HOST'\n", secrets.Dir(*data))
				return nil
			}
			w := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tHOSTS\tSET")
			for _, s := range list {
				fmt.Fprintf(w, "%s\t%s\t%s\n", s.Name, strings.Join(s.Hosts, ","), s.SetAt.Local().Format("2006-01-02 15:04:05"))
			}
			return w.Flush()
		},
	}
	jsonFlag(cmd, a)
	return cmd
}

func newSecretRm(a *app, data *string) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a secret",
		Long: `Remove the secret NAME. Tools that name it fail with a clear error from then
on, once the running 'lumen up' has reloaded the file.`,
		Example: `  lumen secret rm OPENWEATHER_KEY`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := secrets.Remove(secrets.Dir(*data), args[0]); err != nil {
				return secretError(err)
			}
			fmt.Fprintf(a.Stdout, "secret %s removed from %s\n", args[0], secrets.Dir(*data))
			return nil
		},
	}
}

// secretError makes invalid names, hosts and values usage errors.
func secretError(err error) error {
	if errors.Is(err, secrets.ErrInvalid) {
		return cli.Usage(err)
	}
	return err
}
