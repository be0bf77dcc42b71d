package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		os.Exit(1)
	}
}

// options are the global settings, from flags and LITEK8S_* env.
type options struct{ v *viper.Viper }

// Output formats.
const (
	outputTable = "table"
	outputJSON  = "json"
)

func (o *options) output() string { return o.v.GetString("output") }

// client returns a client for the member the settings name.
func (o *options) client() (*adminClient, error) {
	return newAdminClient(o.v.GetString("kubeconfig"), o.v.GetString("server"), o.v.GetString("token"),
		o.v.GetString("certificate-authority"))
}

func newRoot() *cobra.Command {
	o := &options{v: viper.New()}
	root := &cobra.Command{
		Use:          "ctl",
		Short:        "administer a litek8s cluster",
		SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			switch f := o.output(); f {
			case outputTable, outputJSON:
				return nil
			default:
				return fmt.Errorf("--output %q: want %s or %s", f, outputTable, outputJSON)
			}
		},
	}
	pf := root.PersistentFlags()
	pf.String("kubeconfig", "data/kubeconfig", "admin kubeconfig of a member")
	pf.String("server", "", "API URL of the member to ask (overrides the kubeconfig's)")
	pf.String("token", "", "admin token (overrides the kubeconfig's)")
	pf.String("certificate-authority", "", "cluster CA certificate file (overrides the kubeconfig's)")
	pf.StringP("output", "o", outputTable, "output format: table or json")
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
	return root
}
