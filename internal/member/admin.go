package member

import (
	"encoding/json"
	"net/http"
)

// Admin endpoints (/admin/v1/...), what `ctl` calls. The API serves them
// only to requests that carry the admin token.

// Status is one member's own view, GET /admin/v1/status.
type Status struct {
	ID       string `json:"id"`
	APIURL   string `json:"apiURL"`
	RaftAddr string `json:"raftAddr"`
	// Role is Raft's state: Leader, Follower, Candidate or Shutdown.
	Role         string `json:"role"`
	Term         uint64 `json:"term"`
	AppliedIndex uint64 `json:"appliedIndex"`
	CommitIndex  uint64 `json:"commitIndex"`
	LastLogIndex uint64 `json:"lastLogIndex"`
	LeaderID     string `json:"leaderID"`
	Ready        bool   `json:"ready"`
	Version      string `json:"version"`
}

func (m *Member) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/v1/status", func(w http.ResponseWriter, r *http.Request) {
		writeAdminJSON(w, http.StatusOK, m.status())
	})
	return mux
}

func (m *Member) status() Status {
	st := m.store.Status()
	return Status{ID: m.cfg.ID, APIURL: m.url, RaftAddr: m.store.RaftAddr(), Role: st.Role, Term: st.Term,
		AppliedIndex: st.AppliedIndex, CommitIndex: st.CommitIndex, LastLogIndex: st.LastLogIndex,
		LeaderID: st.LeaderID, Ready: m.store.Ready(), Version: m.version}
}

func writeAdminJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
