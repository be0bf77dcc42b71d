package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

func newKubeconfigCmd(o *options) *cobra.Command {
	var ttl time.Duration
	cmd := &cobra.Command{
		Use: "kubeconfig [--ttl 8760h]",
		Short: "print a new admin kubeconfig for the first member that answers (YAML, also with -o table|yaml; JSON with -o json): a client certificate " +
			"of the cluster CA for litek8s-admin in system:masters",
		Example: "  ctl kubeconfig --ttl 24h > admin.kubeconfig",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			var kc []byte
			path := adminapi.PathKubeconfig
			if ttl > 0 {
				path += "?ttl=" + url.QueryEscape(ttl.String())
			}
			if err := c.ask(cmd.Context(), http.MethodGet, path, nil, &kc); err != nil {
				return err
			}
			if o.output() == outputJSON {
				j, err := yaml.YAMLToJSON(kc)
				if err != nil {
					return fmt.Errorf("kubeconfig from %s: %w", c.base, err)
				}
				var buf bytes.Buffer
				if err := json.Indent(&buf, j, "", "  "); err != nil {
					return err
				}
				kc = append(buf.Bytes(), '\n')
			}
			_, err = cmd.OutOrStdout().Write(kc)
			return err
		},
	}
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "how long the certificate is valid (default a year)")
	return cmd
}
