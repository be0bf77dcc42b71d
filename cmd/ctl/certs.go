package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

// CertsOutput is what `ctl certs list -o json` and `ctl certs rotate -o
// json` print: each member asked, with its certificates or why it could not
// be reached.
type CertsOutput struct {
	Members []MemberCerts `json:"members"`
}

// MemberCerts is one member's certificates.
type MemberCerts struct {
	ID     string          `json:"id"`
	APIURL string          `json:"apiURL"`
	Certs  []adminapi.Cert `json:"certs,omitempty"`
	Error  string          `json:"error,omitempty"`
}

func newCertsCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "certs", Short: "list and rotate members' certificates",
		Example: "  ctl certs list --all\n  ctl certs rotate --member m1"}
	var all bool
	list := &cobra.Command{
		Use:     "list [--all]",
		Short:   "a member's certificates (subject, issuer, not-after, renewal, file, what each serves); --all: every member's",
		Example: "  ctl certs list\n  ctl certs list --all -o yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			out := CertsOutput{}
			if !all {
				var l adminapi.CertList
				if err := c.ask(cmd.Context(), http.MethodGet, adminapi.PathCerts, nil, &l); err != nil {
					return err
				}
				out.Members = []MemberCerts{{ID: l.Member, APIURL: c.base, Certs: l.Certs}}
			} else {
				targets, err := memberTargets(cmd.Context(), c, "")
				if err != nil {
					return err
				}
				for _, t := range targets {
					mc := MemberCerts{ID: t.ID, APIURL: t.APIURL}
					var l adminapi.CertList
					if err := c.get(cmd.Context(), t.APIURL, adminapi.PathCerts, &l); err != nil {
						mc.Error = err.Error()
					} else {
						mc.ID, mc.Certs = l.Member, l.Certs
					}
					out.Members = append(out.Members, mc)
				}
			}
			if err := printCerts(cmd.OutOrStdout(), o, out); err != nil {
				return err
			}
			return certsErrors(out)
		},
	}
	list.Flags().BoolVar(&all, "all", false, "ask every member of the configuration")
	var id string
	rotate := &cobra.Command{
		Use:     "rotate [--member ID]",
		Short:   "issue a new member certificate now on the member asked (or --member ID); new connections get it",
		Example: "  ctl certs rotate --member m1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			var l adminapi.CertList
			url := ""
			if id == "" {
				err = c.ask(cmd.Context(), http.MethodPost, adminapi.PathCertRotate, nil, &l)
				url = c.base
			} else {
				targets, err := memberTargets(cmd.Context(), c, id)
				if err != nil {
					return err
				}
				url = targets[0].APIURL
				ctx, cancel := c.bound(cmd.Context())
				defer cancel()
				err = c.call(ctx, http.MethodPost, url, adminapi.PathCertRotate, nil, &l)
			}
			if err != nil {
				return err
			}
			return printCerts(cmd.OutOrStdout(), o, CertsOutput{Members: []MemberCerts{
				{ID: l.Member, APIURL: url, Certs: l.Certs}}})
		},
	}
	rotate.Flags().StringVar(&id, "member", "", "ID of the member to rotate (default: the member asked)")
	cmd.AddCommand(list, rotate)
	return cmd
}

// memberTargets is the configuration's members (only id's when given),
// sorted by ID; a member without a known API URL cannot be asked.
func memberTargets(ctx context.Context, c *adminClient, id string) ([]adminapi.MemberInfo, error) {
	var l adminapi.MemberList
	if err := c.change(ctx, http.MethodGet, adminapi.PathMembers, nil, &l); err != nil {
		return nil, err
	}
	c.remember(l)
	sort.Slice(l.Members, func(i, j int) bool { return l.Members[i].ID < l.Members[j].ID })
	var out []adminapi.MemberInfo
	for _, m := range l.Members {
		if id != "" && m.ID != id {
			continue
		}
		if m.APIURL == "" {
			return nil, fmt.Errorf("member %s: its API URL is not known yet", m.ID)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no member %q in the configuration", id)
	}
	return out, nil
}

func printCerts(w io.Writer, o *options, out CertsOutput) error {
	return o.print(w, out, func(w io.Writer) error { return certsTable(w, out) })
}

func certsTable(w io.Writer, out CertsOutput) error {
	var rows [][]string
	for _, m := range out.Members {
		if m.Error != "" {
			rows = append(rows, []string{orDash(m.ID), "-", "-", "-", "-", "-", "-", "error: " + m.Error})
			continue
		}
		for _, c := range m.Certs {
			renew := "-"
			if c.RenewAt != nil {
				renew = c.RenewAt.UTC().Format(time.RFC3339)
			}
			rows = append(rows, []string{m.ID, c.Name, c.Subject, c.Issuer, c.NotAfter.UTC().Format(time.RFC3339),
				renew, c.File, c.Where})
		}
	}
	return writeTable(w, []string{"MEMBER", "CERT", "SUBJECT", "ISSUER", "NOT AFTER", "RENEWS", "FILE", "USED BY"}, rows)
}

// certsErrors fails the command when a member could not be asked.
func certsErrors(out CertsOutput) error {
	n := 0
	for _, m := range out.Members {
		if m.Error != "" {
			n++
		}
	}
	if n > 0 {
		return unreachableError(fmt.Errorf("%d of %d members unreachable", n, len(out.Members)))
	}
	return nil
}
