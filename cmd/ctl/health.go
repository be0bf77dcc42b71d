package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/cobra"
)

// HealthOutput is what `ctl health -o json|yaml` prints.
type HealthOutput struct {
	// Member is the API URL of the member that answered.
	Member string `json:"member"`
	Ready  bool   `json:"ready"`
	// Answer is the member's /readyz body.
	Answer string `json:"answer"`
}

func newHealthCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "health",
		Short:   "exit 0 when the first member that answers is ready (/readyz), 1 when it is not, 3 when none answers",
		Example: "  ctl health && echo ready\n  ctl --endpoints https://10.0.0.2:6443 --token $TOKEN health -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			h, err := health(cmd.Context(), c)
			if err != nil {
				return err
			}
			if err := o.print(cmd.OutOrStdout(), h, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s: %s\n", h.Member, h.Answer)
				return err
			}); err != nil {
				return err
			}
			if !h.Ready {
				return fmt.Errorf("%s is not ready", h.Member)
			}
			return nil
		},
	}
}

// health asks /readyz?verbose of the first member that answers.
func health(ctx context.Context, c *adminClient) (HealthOutput, error) {
	var body []byte
	err := c.ask(ctx, http.MethodGet, "/readyz", nil, &body)
	if se, ok := err.(*statusError); ok {
		return HealthOutput{Member: c.base, Answer: se.msg}, nil
	}
	if err != nil {
		return HealthOutput{}, err
	}
	return HealthOutput{Member: c.base, Ready: true, Answer: string(body)}, nil
}
