package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/version"
)

func newVersionCmd(o *options) *cobra.Command {
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print ctl's version and the version of the member asked (--client: ctl's alone)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "client: %s\n", version.Get())
			if clientOnly {
				return nil
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			return serverVersion(cmd.Context(), out, c)
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print ctl's version only (no member is asked)")
	return cmd
}

// serverVersion prints the litek8s version the member reports in its
// status.
func serverVersion(ctx context.Context, out io.Writer, c *adminClient) error {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	var s adminapi.Status
	if err := c.get(ctx, c.base, adminapi.PathStatus, &s); err != nil {
		return err
	}
	fmt.Fprintf(out, "server: litek8s %s (member %s at %s)\n", s.Version, s.ID, c.base)
	return nil
}
