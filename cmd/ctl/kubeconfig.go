package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

func newKubeconfigCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "kubeconfig",
		Short: "print an admin kubeconfig for the member asked (YAML; JSON with -o json)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			var kc []byte
			if err := c.get(cmd.Context(), c.base, adminapi.PathKubeconfig, &kc); err != nil {
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
}
