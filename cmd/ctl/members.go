package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

func newMembersCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "members", Short: "list and change the members of the Raft configuration",
		Example: "  ctl members list\n  ctl members remove m3"}
	cmd.AddCommand(
		&cobra.Command{
			Use: "list", Short: "list the members (the leader's view)", Args: cobra.NoArgs,
			Example: "  ctl members list\n  ctl members list -o yaml",
			RunE: func(cmd *cobra.Command, _ []string) error {
				c, err := o.client(cmd)
				if err != nil {
					return err
				}
				var l adminapi.MemberList
				if err := c.change(cmd.Context(), http.MethodGet, adminapi.PathMembers, nil, &l); err != nil {
					return err
				}
				c.remember(l)
				return printMembers(cmd.OutOrStdout(), o, l)
			},
		},
		newMembersAddCmd(o),
		memberChangeCmd(o, "remove", "remove a member from the configuration; the leader refuses to remove "+
			"itself (run ctl leader transfer first, then remove it)", "DELETE", ""),
		memberChangeCmd(o, "promote", "give a nonvoter a vote", "POST", "/promote"),
		memberChangeCmd(o, "demote", "take a voter's vote away (not the leader's)", "POST", "/demote"),
	)
	return cmd
}

func newMembersAddCmd(o *options) *cobra.Command {
	var req adminapi.AddMemberRequest
	var nonvoter bool
	cmd := &cobra.Command{
		Use:     "add ID --raft-addr HOST:PORT --api-url URL [--nonvoter]",
		Short:   "add a member to the configuration (a member started with --join adds itself)",
		Example: "  ctl members add m3 --raft-addr 10.0.0.4:7000 --api-url https://10.0.0.4:6443 --nonvoter",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.ID, req.Suffrage = args[0], "Voter"
			if nonvoter {
				req.Suffrage = "Nonvoter"
			}
			return runMemberChange(cmd, o, "POST", adminapi.PathMembers, &req)
		},
	}
	cmd.Flags().StringVar(&req.RaftAddr, "raft-addr", "", "the member's Raft address (host:port)")
	cmd.Flags().StringVar(&req.APIURL, "api-url", "", "the member's API URL (https://host:port)")
	cmd.Flags().BoolVar(&nonvoter, "nonvoter", false, "add it without a vote (promote it once it has caught up)")
	cmd.MarkFlagRequired("raft-addr")
	cmd.MarkFlagRequired("api-url")
	return cmd
}

// memberChangeCmd is `members VERB ID`, sent as method to
// /admin/v1/members/ID+suffix.
func memberChangeCmd(o *options, verb, short, method, suffix string) *cobra.Command {
	return &cobra.Command{
		Use: verb + " ID", Short: short, Args: cobra.ExactArgs(1),
		Example: "  ctl members " + verb + " m2",
		RunE: func(cmd *cobra.Command, args []string) error {
			path := adminapi.PathMembers + "/" + url.PathEscape(args[0]) + suffix
			return runMemberChange(cmd, o, method, path, nil)
		},
	}
}

// runMemberChange sends a change and prints the configuration after it.
func runMemberChange(cmd *cobra.Command, o *options, method, path string, in any) error {
	c, err := o.client(cmd)
	if err != nil {
		return err
	}
	var l adminapi.MemberList
	if err := c.change(cmd.Context(), method, path, in, &l); err != nil {
		return err
	}
	c.remember(l)
	return printMembers(cmd.OutOrStdout(), o, l)
}

func printMembers(out io.Writer, o *options, l adminapi.MemberList) error {
	sort.Slice(l.Members, func(i, j int) bool { return l.Members[i].ID < l.Members[j].ID })
	return o.print(out, l, func(w io.Writer) error {
		rows := make([][]string, len(l.Members))
		for i, m := range l.Members {
			rows[i] = []string{m.ID, orDash(m.APIURL), m.RaftAddr, m.Suffrage, strconv.FormatBool(m.Leader)}
		}
		if err := writeTable(w, []string{"ID", "API", "RAFT", "SUFFRAGE", "LEADER"}, rows); err != nil || len(l.Removed) == 0 {
			return err
		}
		// Members removed from the configuration, and why: by an
		// administrator, or by the leader's dead-member cleanup.
		rows = make([][]string, len(l.Removed))
		for i, r := range l.Removed {
			rows[i] = []string{r.ID, r.At.UTC().Format(time.RFC3339), r.Reason}
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		return writeTable(w, []string{"REMOVED", "AT", "REASON"}, rows)
	})
}

func newLeaderCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "leader", Short: "move leadership", Example: "  ctl leader transfer --to m1"}
	var to string
	transfer := &cobra.Command{
		Use: "transfer [--to ID]", Short: "hand leadership to a running voter (--to), or to the most up-to-date one",
		Long: `transfer hands leadership over and prints the new leader. A member that is
down or cut off (it has not reported to the leader lately) is refused with
exit code 1.`,
		Example: "  ctl leader transfer\n  ctl leader transfer --to m2 -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			var li adminapi.LeaderInfo
			if err := c.change(cmd.Context(), "POST", adminapi.PathTransfer, adminapi.TransferRequest{ID: to},
				&li); err != nil {
				return err
			}
			return o.print(cmd.OutOrStdout(), li, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "leader: %s (%s)\n", li.ID, orDash(li.APIURL))
				return err
			})
		},
	}
	transfer.Flags().StringVar(&to, "to", "", "ID of the voter to lead (default: any)")
	cmd.AddCommand(transfer)
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newResyncCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "resync MEMBER",
		Short: "make a running follower resync: it is not ready and ends its watches (410) until it has caught up",
		Long: `resync tells a follower, at its next lag report, to fence itself and catch up.
A member that is down or cut off (it has not reported to the leader lately)
is refused with exit code 1, as is the leader itself.`,
		Example: "  ctl resync m2",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			return resync(cmd.Context(), cmd.OutOrStdout(), o, c, args[0])
		},
	}
}

func resync(ctx context.Context, out io.Writer, o *options, c *adminClient, id string) error {
	var l adminapi.MemberLag
	path := adminapi.PathMembers + "/" + url.PathEscape(id) + "/resync"
	if err := c.change(ctx, "POST", path, nil, &l); err != nil {
		return err
	}
	return o.print(out, l, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "%s resyncs at its next lag report (now %d entries behind)\n", l.ID, l.Entries)
		return err
	})
}
