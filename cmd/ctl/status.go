package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"

	"github.com/spf13/cobra"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

// StatusOutput is what `ctl status -o json|yaml` prints: every member of
// the configuration with its own /admin/v1/status.
type StatusOutput struct {
	// NoLeader is set when no member that answered leads (an election, or
	// no quorum): the configuration is then the view of the member asked,
	// and each member's row its own view.
	NoLeader bool           `json:"noLeader,omitempty"`
	Members  []MemberStatus `json:"members"`
}

// MemberStatus is one member: its entry in the configuration (the leader's
// view), what it says of itself, and its lag.
type MemberStatus struct {
	adminapi.MemberInfo
	// Status is the member's own answer; nil when it cannot be reached.
	Status *adminapi.Status `json:"status,omitempty"`
	// Lag is the leader's commit index minus this member's applied index
	// (entries), when both are known.
	Lag *uint64 `json:"lag,omitempty"`
	// LeaderView is the member's lag as the leader tracks it from the
	// member's reports: known even when the member cannot be reached.
	LeaderView *adminapi.MemberLag `json:"leaderView,omitempty"`
	// Error says why the member could not be reached.
	Error string `json:"error,omitempty"`
}

func newStatusCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use: "status",
		Short: "every member: address, role, term, applied index, lag, readiness, version " +
			"(exit 3 if one is unreachable)",
		Long: `status asks the first member that answers for the configuration, then every
member for its own status. Members that cannot be reached are marked
unreachable (exit code 3). Without a leader (an election, no quorum) each
member's row is its own view, and a note says so.`,
		Example: "  ctl status\n  ctl status -o yaml\n  ctl --endpoints https://10.0.0.1:6443,https://10.0.0.2:6443 status",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			st, err := clusterStatus(cmd.Context(), c)
			if err != nil {
				return err
			}
			if err := o.print(cmd.OutOrStdout(), st, func(w io.Writer) error { return printStatus(w, st) }); err != nil {
				return err
			}
			if n := unreachable(st); n > 0 {
				return unreachableError(fmt.Errorf("%d of %d members unreachable", n, len(st.Members)))
			}
			return nil
		},
	}
}

// clusterStatus asks the first member that answers for the configuration
// (its own view when it cannot relay to a leader), then every member for
// its status at its own API URL, then the leader, if one answered, for
// the lags it tracks.
func clusterStatus(ctx context.Context, c *adminClient) (StatusOutput, error) {
	var out StatusOutput
	var l adminapi.MemberList
	err := c.ask(ctx, http.MethodGet, adminapi.PathMembers, nil, &l)
	var se *statusError
	if errors.As(err, &se) && (se.code == http.StatusBadGateway || se.code == http.StatusServiceUnavailable) {
		out.NoLeader = true
		err = c.ask(ctx, http.MethodGet, adminapi.PathMembers+"?"+adminapi.QueryLocal+"=true", nil, &l)
	}
	if err != nil {
		return StatusOutput{}, err
	}
	if !out.NoLeader {
		c.remember(l)
	}
	sort.Slice(l.Members, func(i, j int) bool { return l.Members[i].ID < l.Members[j].ID })
	out.Members = make([]MemberStatus, len(l.Members))
	var wg sync.WaitGroup
	for i, mi := range l.Members {
		ms := &out.Members[i]
		ms.MemberInfo = mi
		if mi.APIURL == "" {
			ms.Error = "no API URL recorded yet"
			continue
		}
		wg.Go(func() {
			var s adminapi.Status
			if err := c.get(ctx, mi.APIURL, adminapi.PathStatus, &s); err != nil {
				ms.Error = err.Error()
				return
			}
			ms.Status = &s
		})
	}
	wg.Wait()
	leader := ""
	for _, m := range out.Members {
		if m.Status != nil && m.Status.Role == "Leader" {
			leader = m.Status.APIURL
		}
	}
	if leader == "" {
		out.NoLeader = true
		return out, nil
	}
	var lags adminapi.LagList
	if c.get(ctx, leader, adminapi.PathLag, &lags) != nil {
		lags.Members = nil // it no longer leads: no leader's view
	}
	for _, l := range lags.Members {
		for i := range out.Members {
			if out.Members[i].ID == l.ID {
				out.Members[i].LeaderView = &l
			}
		}
	}
	if commit, ok := leaderCommit(out.Members); ok {
		for i := range out.Members {
			if s := out.Members[i].Status; s != nil {
				lag := commit - min(commit, s.AppliedIndex) // a member may have applied past the leader's answer
				out.Members[i].Lag = &lag
			}
		}
	}
	return out, nil
}

// leaderCommit is the leader's commit index: the member the configuration
// names as leader, else one that says it leads (the latest term).
func leaderCommit(ms []MemberStatus) (uint64, bool) {
	var best *adminapi.Status
	for _, m := range ms {
		if m.Status == nil {
			continue
		}
		if m.Leader && m.Status.Role == "Leader" {
			return m.Status.CommitIndex, true
		}
		if m.Status.Role == "Leader" && (best == nil || m.Status.Term > best.Term) {
			best = m.Status
		}
	}
	if best == nil {
		return 0, false
	}
	return best.CommitIndex, true
}

func unreachable(st StatusOutput) int {
	n := 0
	for _, m := range st.Members {
		if m.Status == nil {
			n++
		}
	}
	return n
}

// lagCell is the LAG column: entries behind the leader's commit index, or
// as the leader last heard when the member cannot be asked; with the age
// of the oldest missing entry once it passes a second.
func lagCell(m MemberStatus) string {
	lv := m.LeaderView
	var cell string
	switch {
	case m.Lag != nil:
		cell = strconv.FormatUint(*m.Lag, 10)
	case lv != nil && lv.LastReport == nil:
		return "? (no report)"
	case lv != nil:
		cell = strconv.FormatUint(lv.Entries, 10) + " (reported)"
	default:
		return "-"
	}
	if lv != nil && lv.Seconds >= 1 {
		cell += fmt.Sprintf(" %.0fs", lv.Seconds)
	}
	return cell
}

func printStatus(w io.Writer, st StatusOutput) error {
	rows := make([][]string, 0, len(st.Members))
	for _, m := range st.Members {
		s := m.Status
		if s == nil {
			rows = append(rows, []string{m.ID, orDash(m.APIURL), m.RaftAddr, "unreachable", "-", "-", lagCell(m), "-", "-"})
			continue
		}
		role := s.Role
		if m.Suffrage != "" && m.Suffrage != "Voter" {
			role += " (" + m.Suffrage + ")"
		}
		ready := strconv.FormatBool(s.Ready)
		if s.Resyncing {
			ready += " (resyncing)"
		}
		rows = append(rows, []string{m.ID, s.APIURL, s.RaftAddr, role, strconv.FormatUint(s.Term, 10),
			strconv.FormatUint(s.AppliedIndex, 10), lagCell(m), ready, s.Version})
	}
	if err := writeTable(w, []string{"ID", "API", "RAFT", "ROLE", "TERM", "APPLIED", "LAG", "READY", "VERSION"},
		rows); err != nil {
		return err
	}
	if st.NoLeader {
		fmt.Fprintln(w, "no leader (an election, or no quorum): each member's own view")
	}
	for _, m := range st.Members {
		if m.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", m.ID, m.Error)
		}
	}
	return nil
}
