package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

func newMembersCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "members", Short: "list and change the members of the Raft configuration"}
	cmd.AddCommand(
		&cobra.Command{
			Use: "list", Short: "list the members (the leader's view)", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				c, err := o.client()
				if err != nil {
					return err
				}
				var l adminapi.MemberList
				if err := c.get(cmd.Context(), c.base, adminapi.PathMembers, &l); err != nil {
					return err
				}
				return printMembers(cmd.OutOrStdout(), o.output(), l)
			},
		},
		newMembersAddCmd(o),
		memberChangeCmd(o, "remove", "remove a member from the configuration (not the leader: transfer leadership first)",
			"DELETE", ""),
		memberChangeCmd(o, "promote", "give a nonvoter a vote", "POST", "/promote"),
		memberChangeCmd(o, "demote", "take a voter's vote away (not the leader's)", "POST", "/demote"),
	)
	return cmd
}

func newMembersAddCmd(o *options) *cobra.Command {
	var req adminapi.AddMemberRequest
	var nonvoter bool
	cmd := &cobra.Command{
		Use:   "add ID --raft-addr HOST:PORT --api-url URL [--nonvoter]",
		Short: "add a member to the configuration (a member started with --join adds itself)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.ID, req.Suffrage = args[0], "Voter"
			if nonvoter {
				req.Suffrage = "Nonvoter"
			}
			return runMemberChange(cmd.Context(), o, cmd.OutOrStdout(), "POST", adminapi.PathMembers, &req)
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
		RunE: func(cmd *cobra.Command, args []string) error {
			path := adminapi.PathMembers + "/" + url.PathEscape(args[0]) + suffix
			return runMemberChange(cmd.Context(), o, cmd.OutOrStdout(), method, path, nil)
		},
	}
}

// runMemberChange sends a change and prints the configuration after it.
func runMemberChange(ctx context.Context, o *options, out io.Writer, method, path string, in any) error {
	c, err := o.client()
	if err != nil {
		return err
	}
	var l adminapi.MemberList
	if err := c.change(ctx, method, path, in, &l); err != nil {
		return err
	}
	return printMembers(out, o.output(), l)
}

func printMembers(out io.Writer, format string, l adminapi.MemberList) error {
	sort.Slice(l.Members, func(i, j int) bool { return l.Members[i].ID < l.Members[j].ID })
	if format == outputJSON {
		return writeJSON(out, l)
	}
	rows := make([][]string, len(l.Members))
	for i, m := range l.Members {
		rows[i] = []string{m.ID, orDash(m.APIURL), m.RaftAddr, m.Suffrage, strconv.FormatBool(m.Leader)}
	}
	return writeTable(out, []string{"ID", "API", "RAFT", "SUFFRAGE", "LEADER"}, rows)
}

func newLeaderCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "leader", Short: "move leadership"}
	var to string
	transfer := &cobra.Command{
		Use: "transfer [--to ID]", Short: "hand leadership to a voter (--to), or to the most up-to-date one",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			var li adminapi.LeaderInfo
			if err := c.change(cmd.Context(), "POST", adminapi.PathTransfer, adminapi.TransferRequest{ID: to},
				&li); err != nil {
				return err
			}
			if o.output() == outputJSON {
				return writeJSON(cmd.OutOrStdout(), li)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "leader: %s (%s)\n", li.ID, orDash(li.APIURL))
			return err
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
		Short: "make a follower resync: it is not ready and ends its watches (410) until it has caught up",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			var l adminapi.MemberLag
			path := adminapi.PathMembers + "/" + url.PathEscape(args[0]) + "/resync"
			if err := c.change(cmd.Context(), "POST", path, nil, &l); err != nil {
				return err
			}
			if o.output() == outputJSON {
				return writeJSON(cmd.OutOrStdout(), l)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s resyncs at its next lag report (now %d entries behind)\n",
				l.ID, l.Entries)
			return err
		},
	}
}
