package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

// reencryptTimeout bounds `secrets reencrypt`: one write per stale object,
// then a snapshot on every member.
const reencryptTimeout = 10 * time.Minute

func newSecretsCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "secrets", Short: "encryption of Secrets (and other resources) at rest",
		Example: "  ctl secrets reencrypt"}
	cmd.AddCommand(&cobra.Command{
		Use:         "reencrypt",
		Example:     "  ctl secrets reencrypt -o json",
		Annotations: map[string]string{annotationLong: "true"},
		Short: "rewrite every object not stored with the current first encryption key, then snapshot every member " +
			"(the last step of a key rotation: afterwards the old key can be removed)",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), reencryptTimeout)
			defer cancel()
			var res adminapi.ReencryptResult
			if err := c.ask(ctx, http.MethodPost, adminapi.PathReencrypt, nil, &res); err != nil {
				return err
			}
			if err := o.print(cmd.OutOrStdout(), res, func(w io.Writer) error { return printReencrypt(w, res) }); err != nil {
				return err
			}
			if res.Error != "" {
				return errors.New(res.Error)
			}
			return nil
		},
	})
	return cmd
}

func printReencrypt(w io.Writer, res adminapi.ReencryptResult) error {
	rows := [][]string{}
	for _, r := range sortedKeys(res.Rewritten) {
		rows = append(rows, []string{r, fmt.Sprint(res.Rewritten[r])})
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "no object needed rewriting")
	} else if err := writeTable(w, []string{"RESOURCE", "REWRITTEN"}, rows); err != nil {
		return err
	}
	for _, id := range sortedKeys(res.Snapshots) {
		fmt.Fprintf(w, "%s: snapshot at index %d\n", id, res.Snapshots[id])
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
