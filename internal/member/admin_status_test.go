package member_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

func adminStatus(t *testing.T, c *membertest.Cluster, i int) adminapi.Status {
	t.Helper()
	code, b := admin(t, c, adminCall{member: i, method: "GET", path: adminapi.PathStatus})
	var st adminapi.Status
	if code != http.StatusOK || json.Unmarshal(b, &st) != nil {
		t.Fatalf("status of member %d: %d %s", i, code, b)
	}
	return st
}

// Issue 19, through the admin API ctl reads: after a leadership transfer
// every member's applied index reaches the leader's commit index (ctl's LAG
// 0) and the leader's view shows no lag; a member removed from the
// configuration says so in its status and the members list says why.
func TestAdminStatusNoPhantomLagAndRemoved(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	l := c.WaitLeader()
	code, b := admin(t, c, adminCall{member: l, method: "POST", path: adminapi.PathTransfer})
	if code != http.StatusOK {
		t.Fatalf("transfer: %d %s", code, b)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		l = c.WaitLeader()
		commit := adminStatus(t, c, l).CommitIndex
		for i := range c.N() {
			if st := adminStatus(t, c, i); st.AppliedIndex < commit {
				return fmt.Errorf("%s (%s): applied %d, leader's commit %d", st.ID, st.Role, st.AppliedIndex, commit)
			}
		}
		code, b := admin(t, c, adminCall{member: l, method: "GET", path: adminapi.PathLag})
		var lags adminapi.LagList
		if code != http.StatusOK || json.Unmarshal(b, &lags) != nil {
			return fmt.Errorf("lag: %d %s", code, b)
		}
		for _, m := range lags.Members {
			if m.Entries != 0 || (m.LastReport == nil && m.ID != c.Config(l).ID) { // the leader does not report
				return fmt.Errorf("leader's view: %+v", m)
			}
		}
		return nil
	})

	gone := (l + 1) % 3
	goneID := c.Config(gone).ID
	if st := adminStatus(t, c, gone); st.Removed {
		t.Fatalf("a member of the configuration says it is removed: %+v", st)
	}
	code, b = admin(t, c, adminCall{member: l, method: "DELETE", path: adminapi.PathMembers + "/" + goneID})
	var ml adminapi.MemberList
	if code != http.StatusOK || json.Unmarshal(b, &ml) != nil {
		t.Fatalf("remove %s: %d %s", goneID, code, b)
	}
	if len(ml.Removed) != 1 || ml.Removed[0].ID != goneID || ml.Removed[0].Reason == "" || ml.Removed[0].At.IsZero() {
		t.Fatalf("members after removing %s: %s", goneID, b)
	}
	membertest.Eventually(t, 10*time.Second, func() error {
		if st := adminStatus(t, c, gone); !st.Removed || st.Ready {
			return fmt.Errorf("removed member's status: %+v", st)
		}
		return nil
	})
}
