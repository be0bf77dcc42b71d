package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/litek8s/litek8s/internal/member/jointoken"
)

// secretsPath is the API path of the Secrets that record join tokens.
const secretsPath = "/api/v1/namespaces/" + jointoken.Namespace + "/secrets"

func newTokenCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "token",
		Short:   "join tokens: create (with an expiry), list, revoke",
		Example: "  ctl token create --ttl 1h\n  ctl token list",
		Long: "A join token lets a new member fetch the cluster's secrets (the CA and its key: every member issues " +
			"certificates) and join. The cluster keeps only each token's SHA-256 hash, in a Secret of type " +
			string(jointoken.SecretType) + " in " + jointoken.Namespace + ". The token the cluster was bootstrapped with " +
			"(tls/join-token of the first member) works until revoked.",
	}
	cmd.AddCommand(newTokenCreateCmd(o), newTokenListCmd(o), newTokenRevokeCmd(o))
	return cmd
}

func newTokenCreateCmd(o *options) *cobra.Command {
	var ttl time.Duration
	var description string
	cmd := &cobra.Command{
		Use:   "create [--ttl 1h] [--description TEXT]",
		Short: "create a join token and print it (it is shown only once)",
		Example: `  TOKEN=$(ctl token create --ttl 1h --description "node-4")
  node --id node-4 --data-dir d4 --join https://127.0.0.1:6443 --join-token "$TOKEN"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ttl < 0 {
				return usageError(fmt.Errorf("--ttl %s: want 0 (never expires) or more", ttl))
			}
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			tok, err := jointoken.New()
			if err != nil {
				return err
			}
			rec := jointoken.NewRecord(tok, ttl, description, time.Now())
			if err := c.change(cmd.Context(), http.MethodPost, secretsPath, rec.Secret(), nil); err != nil {
				return fmt.Errorf("record the token: %w", err)
			}
			return o.print(cmd.OutOrStdout(), struct {
				Token string `json:"token"`
				*jointoken.Record
			}{tok, rec}, func(w io.Writer) error {
				_, err := fmt.Fprintln(w, tok)
				return err
			})
		},
	}
	cmd.Flags().DurationVar(&ttl, "ttl", 24*time.Hour, "how long the token joins (0: until revoked)")
	cmd.Flags().StringVar(&description, "description", "", "what the token is for (shown by list)")
	return cmd
}

func newTokenListCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "list the cluster's join tokens (IDs, expiry, state; never the tokens)",
		Example: "  ctl token list\n  ctl token list -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			recs, err := listTokens(cmd, c)
			if err != nil {
				return err
			}
			return o.print(cmd.OutOrStdout(), recs, func(w io.Writer) error { return tokenTable(w, recs) })
		},
	}
}

func tokenTable(w io.Writer, recs []*jointoken.Record) error {
	now := time.Now()
	rows := make([][]string, 0, len(recs))
	for _, r := range recs {
		exp, state := "never", "valid"
		if r.Expiration != nil {
			exp = r.Expiration.UTC().Format(time.RFC3339)
		}
		switch {
		case r.Revoked:
			state = "revoked"
		case r.Expired(now):
			state = "expired"
		}
		desc := r.Description
		if r.Initial {
			desc = "(bootstrap) " + desc
		}
		rows = append(rows, []string{r.ID, state, exp, r.Created.UTC().Format(time.RFC3339), desc})
	}
	return writeTable(w, []string{"ID", "STATE", "EXPIRES", "CREATED", "DESCRIPTION"}, rows)
}

// listTokens reads every join token record, oldest first.
func listTokens(cmd *cobra.Command, c *adminClient) ([]*jointoken.Record, error) {
	var list corev1.SecretList
	if err := c.ask(cmd.Context(), http.MethodGet, secretsPath, nil, &list); err != nil {
		return nil, err
	}
	var recs []*jointoken.Record
	for i := range list.Items {
		s := &list.Items[i]
		if s.Type != jointoken.SecretType {
			continue
		}
		if r, err := jointoken.FromSecret(s); err == nil {
			recs = append(recs, r)
		}
	}
	slices.SortFunc(recs, func(a, b *jointoken.Record) int { return a.Created.Compare(b.Created) })
	return recs, nil
}

func newTokenRevokeCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:     "revoke ID",
		Short:   "revoke a join token at once (its ID from list, or the token itself)",
		Example: "  ctl token revoke abc123",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if !jointoken.ValidID(id) {
				id = jointoken.ID(id) // the token itself
			}
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			path := secretsPath + "/" + jointoken.SecretName(id)
			var s corev1.Secret
			err = c.ask(cmd.Context(), http.MethodGet, path, nil, &s)
			var se *statusError
			if errors.As(err, &se) && se.code == http.StatusNotFound || err == nil && s.Type != jointoken.SecretType {
				return fmt.Errorf("no join token %s (ctl token list)", id)
			} else if err != nil {
				return err
			}
			rec, err := jointoken.FromSecret(&s)
			if err != nil {
				return err
			}
			if rec.Initial {
				// the bootstrap token is known to every member by its hash:
				// its record stays, marked revoked
				rec.Revoked = true
				upd := rec.Secret()
				upd.ResourceVersion = s.ResourceVersion
				err = c.change(cmd.Context(), http.MethodPut, path, upd, nil)
			} else {
				err = c.change(cmd.Context(), http.MethodDelete, path, nil, nil)
			}
			if err != nil {
				return err
			}
			res := struct {
				ID      string `json:"id"`
				Revoked bool   `json:"revoked"`
			}{strings.TrimSpace(id), true}
			return o.print(cmd.OutOrStdout(), res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "join token %s revoked\n", res.ID)
				return err
			})
		},
	}
}
