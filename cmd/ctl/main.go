// Command ctl administers a litek8s cluster. For now it has `health`, which
// exits 0 when the member behind a kubeconfig is ready; membership,
// snapshots and status come with the operations work (issue 6).
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{Use: "ctl", Short: "administer a litek8s cluster", SilenceUsage: true}
	var kubeconfig string
	root.PersistentFlags().StringVar(&kubeconfig, "kubeconfig", "data/kubeconfig", "admin kubeconfig of a member")
	root.AddCommand(&cobra.Command{
		Use:   "health",
		Short: "exit 0 when the member is ready (/readyz), 1 otherwise",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return health(cmd.Context(), cmd.OutOrStdout(), kubeconfig)
		},
	})
	return root
}

func health(ctx context.Context, out io.Writer, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.Timeout = 10 * time.Second
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprintf(out, "%s: %s\n", cfg.Host, body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: %s", resp.Status)
	}
	return nil
}
