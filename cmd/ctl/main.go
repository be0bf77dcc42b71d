// Command ctl administers a litek8s cluster through a member's admin
// endpoints (/admin/v1/..., see internal/member/adminapi) with the admin
// credentials of a kubeconfig (default data/kubeconfig, the one a member
// writes at first start) or of flags:
//
//	ctl status                         every member: role, term, applied index, lag, readiness
//	ctl members list|add|remove|promote|demote
//	ctl leader transfer [--to ID]
//	ctl resync MEMBER                  make a follower fence itself and catch up
//	ctl snapshot save FILE             a consistent backup streamed from the member asked
//	ctl snapshot inspect FILE          check and describe a backup (offline)
//	ctl snapshot restore FILE --data-dir DIR --id ID [--raft-addr ADDR]   (offline)
//	ctl kubeconfig                     an admin kubeconfig for the member asked
//	ctl health                         exit 0 when the member is ready
//	ctl version [--client]             ctl's version and the asked member's
//
// Global flags (each also LITEK8S_<NAME> in the environment, e.g.
// LITEK8S_SERVER): --kubeconfig, --server, --token and
// --certificate-authority (which override the kubeconfig's), and -o/--output
// table (default) or json, which prints the JSON the endpoints return.
// Any failure, including an unreachable member in `status`, exits 1.
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
	root.SetErrPrefix("ctl:")
	return root
}
