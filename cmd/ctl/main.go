package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

func main() {
	os.Exit(exitCode(newRoot().Execute()))
}

// options are the global settings, from flags and LITEK8S_* env.
type options struct{ v *viper.Viper }

func (o *options) output() string { return o.v.GetString("output") }

// client returns a client for the members the settings name; long
// commands (a backup, a re-encryption) are not bounded by --timeout.
func (o *options) client(cmd *cobra.Command) (*adminClient, error) {
	var eps []string
	for _, e := range o.v.GetStringSlice("endpoints") {
		for _, p := range strings.Split(e, ",") {
			if p = strings.TrimSpace(p); p != "" {
				eps = append(eps, p)
			}
		}
	}
	s := settings{kubeconfig: o.v.GetString("kubeconfig"), context: o.v.GetString("context"),
		server: o.v.GetString("server"), token: o.v.GetString("token"), caFile: o.v.GetString("certificate-authority"),
		endpoints: eps, timeout: o.v.GetDuration("timeout"), dialTimeout: o.v.GetDuration("dial-timeout"),
		cacheDir: o.v.GetString("cache-dir"), long: cmd.Annotations[annotationLong] == "true"}
	return newAdminClient(s)
}

// annotationLong marks a command that runs until done: --timeout bounds
// its connections only.
const annotationLong = "litek8s.io/long"

const rootLong = `ctl administers a litek8s cluster through its members' admin endpoints.

Which cluster: --endpoints URL,URL... (etcdctl's habit), else the server of
the kubeconfig's current context (--context picks another). The kubeconfig
is --kubeconfig; else $KUBECONFIG, a list of files merged as kubectl merges
it; else data/kubeconfig when it exists (the one a member writes in its
working directory); else ~/.kube/config. The first member that answers is
used; one that cannot be reached is skipped. ctl remembers the members'
API URLs (--cache-dir), so a kubeconfig whose member is down still reaches
the others.

--timeout bounds each command (every member it asks, and the whole; a
change also waits within it for a leader); --dial-timeout bounds each
connection. Snapshot save and secrets reencrypt run until done.

Every flag is also LITEK8S_<FLAG> in the environment (LITEK8S_ENDPOINTS).

Exit codes:
  0  ok
  1  failed: a member refused, or the operation failed
  2  bad usage: unknown command or flag, wrong arguments, bad -o, settings that name no cluster
  3  unreachable: no member could be reached, or one the command asked could not`

func newRoot() *cobra.Command {
	o := &options{v: viper.New()}
	root := &cobra.Command{
		Use:          "ctl",
		Short:        "administer a litek8s cluster",
		Long:         rootLong,
		Example:      "  ctl status\n  KUBECONFIG=data/kubeconfig ctl members list -o yaml\n  ctl --endpoints https://10.0.0.1:6443,https://10.0.0.2:6443 --token $TOKEN status",
		SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if f := o.output(); !validOutput(f) {
				return usageError(fmt.Errorf("--output %q: want %s", f, strings.Join(outputFormats, ", ")))
			}
			if o.v.GetDuration("timeout") <= 0 || o.v.GetDuration("dial-timeout") <= 0 {
				return usageError(fmt.Errorf("--timeout and --dial-timeout must be positive"))
			}
			return nil
		},
	}
	cacheDir := ""
	if d, err := os.UserCacheDir(); err == nil {
		cacheDir = filepath.Join(d, "litek8s")
	}
	pf := root.PersistentFlags()
	pf.String("kubeconfig", "", "admin kubeconfig (default: $KUBECONFIG, else data/kubeconfig if it exists, else ~/.kube/config)")
	pf.String("context", "", "kubeconfig context to use (default: its current context)")
	pf.StringSlice("endpoints", nil, "API URLs of members to ask, in turn (default: the kubeconfig's server)")
	pf.String("server", "", "API URL of the member to ask (one endpoint)")
	pf.String("token", "", "admin token (overrides the kubeconfig's)")
	pf.String("certificate-authority", "", "cluster CA certificate file (overrides the kubeconfig's)")
	pf.StringP("output", "o", outputTable, "output format: "+strings.Join(outputFormats, ", "))
	pf.Duration("timeout", defaultTimeout, "bound of a whole command and of every member it asks")
	pf.Duration("dial-timeout", defaultDialTimeout, "bound of each connection to a member (TCP and TLS)")
	pf.String("cache-dir", cacheDir, "where ctl remembers members' API URLs (\"\": nowhere)")
	o.v.SetEnvPrefix("LITEK8S")
	o.v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	o.v.AutomaticEnv()
	if err := o.v.BindPFlags(pf); err != nil {
		panic(err) // only on a nil flag set
	}
	root.AddCommand(newStatusCmd(o), newMembersCmd(o), newLeaderCmd(o), newResyncCmd(o), newSnapshotCmd(o),
		newKubeconfigCmd(o), newHealthCmd(o), newVersionCmd(o))
	root.AddCommand(newTokenCmd(o))
	root.AddCommand(newCertsCmd(o))
	root.AddCommand(newSecretsCmd(o))
	root.SetErrPrefix("ctl:")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	classifyUsage(root)
	return root
}

// classifyUsage makes argument errors usage errors (exit 2), and a group
// (members, leader, ...) given an unknown subcommand fail with one
// instead of printing its help and exiting 0.
func classifyUsage(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		classifyUsage(c)
	}
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return usageError(err)
			}
			return nil
		}
	}
	if cmd.HasParent() && cmd.HasSubCommands() && cmd.RunE == nil && cmd.Run == nil {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = func(c *cobra.Command, a []string) error {
			if len(a) > 0 {
				return usageError(fmt.Errorf("unknown command %q for %q; see %s --help", a[0], c.CommandPath(),
					c.CommandPath()))
			}
			return c.Help()
		}
	}
}
