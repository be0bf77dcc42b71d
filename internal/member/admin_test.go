package member_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// adminCall is one request to a member's admin API and what it answers.
type adminCall struct {
	member      int
	method      string
	path        string
	body        string
	contentType string // application/json when body is set and this is empty
	token       string // the admin token when empty; "-" sends none
}

func admin(t *testing.T, c *membertest.Cluster, a adminCall) (int, []byte) {
	t.Helper()
	var body io.Reader
	if a.body != "" {
		body = strings.NewReader(a.body)
	}
	req, err := http.NewRequestWithContext(t.Context(), a.method, c.Member(a.member).URL()+a.path, body)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case a.contentType != "":
		req.Header.Set("Content-Type", a.contentType)
	case a.body != "":
		req.Header.Set("Content-Type", "application/json")
	}
	switch a.token {
	case "":
		req.Header.Set("Authorization", "Bearer "+c.Token())
	case "-":
	default:
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := (&http.Client{Transport: c.Transport(a.member), Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", a.method, a.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// adminMembers sends a, which must succeed with a adminapi.MemberList, and returns
// the list by ID.
func adminMembers(t *testing.T, c *membertest.Cluster, a adminCall) map[string]adminapi.MemberInfo {
	t.Helper()
	code, b := admin(t, c, a)
	if code != http.StatusOK {
		t.Fatalf("%s %s on member %d: %d %s", a.method, a.path, a.member, code, b)
	}
	var l adminapi.MemberList
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("%s %s: %v: %s", a.method, a.path, err, b)
	}
	out := make(map[string]adminapi.MemberInfo, len(l.Members))
	for _, m := range l.Members {
		out[m.ID] = m
	}
	return out
}

// Membership changes sent to a follower reach the leader, and the list a
// follower answers right after a change shows it.
func TestAdminMembershipThroughFollower(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	l, f := c.WaitLeader(), c.Follower()
	leaderID := c.Config(l).ID

	ms := adminMembers(t, c, adminCall{member: f, method: "GET", path: "/admin/v1/members"})
	if len(ms) != 3 || !ms[leaderID].Leader {
		t.Fatalf("members from follower %d: %+v (leader %s)", f, ms, leaderID)
	}
	for id, m := range ms {
		if m.Suffrage != "Voter" || m.APIURL == "" || m.RaftAddr == "" || (m.Leader != (id == leaderID)) {
			t.Errorf("member %s: %+v", id, m)
		}
	}

	// A member that is not running yet (nothing listens at its address): a
	// nonvoter costs the cluster nothing; as a voter it still leaves a
	// quorum of the three running members.
	add := `{"id":"ghost","raftAddr":"127.0.0.1:1","apiURL":"https://127.0.0.1:1","suffrage":"Nonvoter"}`
	ms = adminMembers(t, c, adminCall{member: f, method: "POST", path: "/admin/v1/members", body: add})
	if g := ms["ghost"]; len(ms) != 4 || g.Suffrage != "Nonvoter" || g.APIURL != "https://127.0.0.1:1" {
		t.Fatalf("after adding ghost: %+v", ms)
	}
	for _, step := range []struct{ verb, want string }{{"promote", "Voter"}, {"demote", "Nonvoter"}, {"promote", "Voter"}} {
		ms = adminMembers(t, c, adminCall{member: f, method: "POST", path: "/admin/v1/members/ghost/" + step.verb})
		if g := ms["ghost"]; g.Suffrage != step.want {
			t.Fatalf("after %s: ghost is %+v", step.verb, g)
		}
	}
	ms = adminMembers(t, c, adminCall{member: f, method: "GET", path: "/admin/v1/members"})
	if ms["ghost"].Suffrage != "Voter" {
		t.Fatalf("list after promote: %+v", ms)
	}
	ms = adminMembers(t, c, adminCall{member: f, method: "DELETE", path: "/admin/v1/members/ghost"})
	if _, ok := ms["ghost"]; ok || len(ms) != 3 {
		t.Fatalf("after removing ghost: %+v", ms)
	}
	for i := range c.N() {
		m := c.Member(i)
		membertest.Eventually(t, 5*time.Second, func() error {
			got, err := m.Store().Membership()
			if err != nil {
				return err
			}
			if len(got) != 3 {
				return fmt.Errorf("member %d still has %d members: %+v", i, len(got), got)
			}
			return nil
		})
	}
	if _, _, err := c.Member(l).Store().Get(t.Context(), kv.Key{Resource: "_members", Name: "ghost"}, false); !errors.Is(err, kv.ErrNotFound) {
		t.Errorf("the removed member's addresses are still recorded: %v", err)
	}
}

// Bad admin requests get a precise JSON error and change nothing.
func TestAdminErrors(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	l, f := c.WaitLeader(), c.Follower()
	leaderID := c.Config(l).ID
	// a nonvoter, for the transfer refusal
	adminMembers(t, c, adminCall{member: l, method: "POST", path: "/admin/v1/members",
		body: `{"id":"ghost","raftAddr":"127.0.0.1:1","apiURL":"https://127.0.0.1:1","suffrage":"Nonvoter"}`})
	for _, tc := range []struct {
		name string
		call adminCall
		code int
		msg  string
	}{
		{"remove the leader", adminCall{member: f, method: "DELETE", path: "/admin/v1/members/" + leaderID},
			http.StatusConflict, "transfer leadership first"},
		{"demote the leader", adminCall{member: l, method: "POST", path: "/admin/v1/members/" + leaderID + "/demote"},
			http.StatusConflict, "transfer leadership first"},
		{"remove unknown", adminCall{member: f, method: "DELETE", path: "/admin/v1/members/nobody"},
			http.StatusNotFound, `"nobody"`},
		{"promote unknown", adminCall{member: l, method: "POST", path: "/admin/v1/members/nobody/promote"},
			http.StatusNotFound, `"nobody"`},
		{"add a voter as nonvoter", adminCall{member: f, method: "POST", path: "/admin/v1/members",
			body: fmt.Sprintf(`{"id":%q,"raftAddr":"127.0.0.1:1","apiURL":"https://x","suffrage":"Nonvoter"}`, c.Config(f).ID)},
			http.StatusConflict, "demote it instead"},
		{"transfer to a nonvoter", adminCall{member: f, method: "POST", path: "/admin/v1/leader/transfer", body: `{"id":"ghost"}`},
			http.StatusConflict, "has no vote"},
		{"transfer to unknown", adminCall{member: l, method: "POST", path: "/admin/v1/leader/transfer", body: `{"id":"nobody"}`},
			http.StatusNotFound, `"nobody"`},
		{"resync the leader", adminCall{member: f, method: "POST", path: "/admin/v1/members/" + leaderID + "/resync"},
			http.StatusConflict, "does not resync"},
		{"resync unknown", adminCall{member: f, method: "POST", path: "/admin/v1/members/nobody/resync"},
			http.StatusNotFound, `"nobody"`},
		{"resync a member that never reported", adminCall{member: f, method: "POST", path: "/admin/v1/members/ghost/resync"},
			http.StatusConflict, "member ghost has not reported to the leader since it took over: it is down or cut off"},
		{"add without address", adminCall{member: f, method: "POST", path: "/admin/v1/members", body: `{"id":"x"}`},
			http.StatusBadRequest, "raftAddr and apiURL are required"},
		{"add with a bad suffrage", adminCall{member: l, method: "POST", path: "/admin/v1/members",
			body: `{"id":"x","raftAddr":"127.0.0.1:1","apiURL":"https://x","suffrage":"Staging"}`},
			http.StatusBadRequest, `suffrage "Staging"`},
		{"unknown field", adminCall{member: f, method: "POST", path: "/admin/v1/members", body: `{"name":"x"}`},
			http.StatusBadRequest, `unknown field "name"`},
		{"not JSON", adminCall{member: f, method: "POST", path: "/admin/v1/members", body: `id=x`},
			http.StatusBadRequest, "bad request body"},
		{"form content type", adminCall{member: l, method: "POST", path: "/admin/v1/members", body: `id=x`,
			contentType: "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, "application/json"},
		{"wrong method", adminCall{member: f, method: "PUT", path: "/admin/v1/members"},
			http.StatusMethodNotAllowed, "GET, POST"},
		{"unknown path", adminCall{member: f, method: "GET", path: "/admin/v1/nothing"}, http.StatusNotFound, "/admin/v1/nothing"},
		// without credentials: system:anonymous, whom RBAC refuses /admin/ (kube: 403)
		{"no token", adminCall{member: f, method: "GET", path: "/admin/v1/members", token: "-"}, http.StatusForbidden,
			`User \"system:anonymous\" cannot get path \"/admin/v1/members\"`},
		{"wrong token", adminCall{member: f, method: "DELETE", path: "/admin/v1/members/ghost", token: "nope"},
			http.StatusUnauthorized, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := admin(t, c, tc.call)
			if code != tc.code {
				t.Fatalf("code %d, want %d: %s", code, tc.code, b)
			}
			if tc.code == http.StatusUnauthorized || tc.code == http.StatusForbidden {
				if !strings.Contains(string(b), tc.msg) || !strings.Contains(string(b), `"kind":"Status"`) {
					t.Fatalf("body %s, want the API's Status with %q", b, tc.msg)
				}
				return
			}
			var e adminapi.Error
			if err := json.Unmarshal(b, &e); err != nil || !strings.Contains(e.Error, tc.msg) {
				t.Fatalf("body %s (%v), want an error with %q", b, err, tc.msg)
			}
		})
	}
	ms := adminMembers(t, c, adminCall{member: l, method: "GET", path: "/admin/v1/members"})
	if len(ms) != 4 || !ms[leaderID].Leader || ms["ghost"].Suffrage != "Nonvoter" {
		t.Fatalf("members after refused requests: %+v", ms)
	}
	code, b := admin(t, c, adminCall{member: f, method: "GET", path: "/admin/v1/lag"})
	var lags adminapi.LagList
	if code != http.StatusOK || json.Unmarshal(b, &lags) != nil || len(lags.Members) != 4 {
		t.Fatalf("lag from a follower: %d %s", code, b)
	}
	for _, lg := range lags.Members {
		if lg.Resyncs != 0 {
			t.Errorf("a refused resync was counted: %+v", lg)
		}
	}
}

// A transfer sent to a follower moves leadership to the member named.
func TestAdminLeaderTransfer(t *testing.T) {
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	l := c.WaitLeader()
	to := (l + 1) % 3
	via := (l + 2) % 3
	code, b := admin(t, c, adminCall{member: via, method: "POST", path: "/admin/v1/leader/transfer",
		body: fmt.Sprintf(`{"id":%q}`, c.Config(to).ID)})
	if code != http.StatusOK {
		t.Fatalf("transfer: %d %s", code, b)
	}
	var li adminapi.LeaderInfo
	if err := json.Unmarshal(b, &li); err != nil || li.ID != c.Config(to).ID || li.APIURL != c.Member(to).URL() {
		t.Fatalf("transfer answered %s (%v), want %s at %s", b, err, c.Config(to).ID, c.Member(to).URL())
	}
	membertest.Eventually(t, 5*time.Second, func() error {
		if !c.Member(to).Store().IsLeader() {
			return fmt.Errorf("member %d does not lead", to)
		}
		return nil
	})
	// Naming the leader is a no-op; naming nobody moves it elsewhere.
	code, b = admin(t, c, adminCall{member: l, method: "POST", path: "/admin/v1/leader/transfer",
		body: fmt.Sprintf(`{"id":%q}`, c.Config(to).ID)})
	if code != http.StatusOK || !strings.Contains(string(b), c.Config(to).ID) {
		t.Fatalf("transfer to the leader: %d %s", code, b)
	}
	code, b = admin(t, c, adminCall{member: to, method: "POST", path: "/admin/v1/leader/transfer"})
	if code != http.StatusOK || json.Unmarshal(b, &li) != nil || li.ID == c.Config(to).ID || li.ID == "" {
		t.Fatalf("transfer to any: %d %s", code, b)
	}
}

// Each member hands out an admin kubeconfig for itself.
func TestAdminKubeconfig(t *testing.T) {
	c := membertest.StartCluster(t, 2, membertest.FastRaft)
	for i := range c.N() {
		m := c.Member(i)
		code, b := admin(t, c, adminCall{member: i, method: "GET", path: "/admin/v1/kubeconfig"})
		if code != http.StatusOK || !strings.Contains(string(b), "server: "+m.URL()+"\n") ||
			!strings.Contains(string(b), "certificate-authority-data: ") {
			t.Fatalf("member %d: %d %s", i, code, b)
		}
	}
}
