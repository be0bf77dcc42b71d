package main

import (
	"context"
	"fmt"
	"io"
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
	cmd := &cobra.Command{Use: "certs", Short: "list and rotate members' certificates"}
	var all bool
	list := &cobra.Command{
		Use:   "list [--all]",
		Short: "a member's certificates (subject, issuer, not-after, renewal, file, what each serves); --all: every member's",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			targets := []adminapi.MemberInfo{{APIURL: c.base}}
			if all {
				if targets, err = memberTargets(cmd.Context(), c, ""); err != nil {
					return err
				}
			}
			out := CertsOutput{}
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
			if err := printCerts(cmd.OutOrStdout(), o.output(), out); err != nil {
				return err
			}
			return certsErrors(out)
		},
	}
	list.Flags().BoolVar(&all, "all", false, "ask every member of the configuration")
	var id string
	rotate := &cobra.Command{
		Use:   "rotate [--member ID]",
		Short: "issue a new member certificate now on the member asked (or --member ID); new connections get it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			url := c.base
			if id != "" {
				targets, err := memberTargets(cmd.Context(), c, id)
				if err != nil {
					return err
				}
				url = targets[0].APIURL
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), readTimeout)
			defer cancel()
			var l adminapi.CertList
			if err := c.call(ctx, "POST", url, adminapi.PathCertRotate, nil, &l); err != nil {
				return err
			}
			return printCerts(cmd.OutOrStdout(), o.output(), CertsOutput{Members: []MemberCerts{
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
	if err := c.get(ctx, c.base, adminapi.PathMembers, &l); err != nil {
		return nil, err
	}
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

func printCerts(w io.Writer, format string, out CertsOutput) error {
	if format == outputJSON {
		return writeJSON(w, out)
	}
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
		return fmt.Errorf("%d of %d members unreachable", n, len(out.Members))
	}
	return nil
}
