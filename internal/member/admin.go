package member

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// Admin endpoints (/admin/v1/...), what `ctl` calls. The API serves them
// only to requests that carry the admin token.
//
//	GET    /admin/v1/status                 this member's Status
//	GET    /admin/v1/members                MemberList (the leader's view)
//	POST   /admin/v1/members                AddMemberRequest → MemberList
//	DELETE /admin/v1/members/{id}           → MemberList
//	POST   /admin/v1/members/{id}/promote   → MemberList
//	POST   /admin/v1/members/{id}/demote    → MemberList
//	POST   /admin/v1/members/{id}/resync    → 202 MemberLag (the member resyncs at its next lag report)
//	GET    /admin/v1/lag                    LagList (the leader's view)
//	POST   /admin/v1/leader/transfer        TransferRequest (optional) → LeaderInfo
//	GET    /admin/v1/kubeconfig             this member's admin kubeconfig (YAML)
//	GET    /admin/v1/snapshot               a consistent backup (raftstore.Backup), streamed
//
// Membership changes, resync requests and GET lag run on the leader: a
// follower relays them there with the caller's token (toLeader) and relays
// the answer. GET members is relayed too, so that a list right after a change shows it; with no
// leader known, the member answers from its own configuration. Errors are
// AdminError bodies.

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
	// SnapshotIndex is the index of the member's latest Raft snapshot.
	SnapshotIndex uint64 `json:"snapshotIndex"`
	LeaderID      string `json:"leaderID"`
	Ready         bool   `json:"ready"`
	// Resyncing is true while the member catches up after the leader told
	// it to resync (it is not ready meanwhile).
	Resyncing bool   `json:"resyncing"`
	Version   string `json:"version"`
}

// MemberInfo is one member of the Raft configuration.
type MemberInfo struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	// APIURL is empty until the member's addresses are recorded.
	APIURL string `json:"apiURL"`
	// Suffrage is Voter or Nonvoter.
	Suffrage string `json:"suffrage"`
	Leader   bool   `json:"leader"`
}

// MemberList is the Raft configuration, GET /admin/v1/members.
type MemberList struct {
	Members []MemberInfo `json:"members"`
}

// AddMemberRequest is the body of POST /admin/v1/members. Suffrage is
// Voter (the default) or Nonvoter.
type AddMemberRequest struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raftAddr"`
	APIURL   string `json:"apiURL"`
	Suffrage string `json:"suffrage,omitempty"`
}

// TransferRequest is the optional body of POST /admin/v1/leader/transfer:
// the voter to hand leadership to, or any when ID is empty.
type TransferRequest struct {
	ID string `json:"id,omitempty"`
}

// LeaderInfo names the leader after a transfer.
type LeaderInfo struct {
	ID     string `json:"id"`
	APIURL string `json:"apiURL"`
}

// MemberLag is one member's lag as the leader sees it from the applied
// indexes the followers report.
type MemberLag struct {
	ID string `json:"id"`
	// Applied is the member's applied index at its last report (the
	// leader's own for the leader; 0 before its first report this term).
	Applied uint64 `json:"applied"`
	// Entries is how many entries the leader applied that the member had
	// not at its last report; Seconds how long ago the leader applied the
	// oldest of them.
	Entries uint64  `json:"entries"`
	Seconds float64 `json:"seconds"`
	// LastReport is when the member last reported (absent: not this term).
	LastReport *time.Time `json:"lastReport,omitempty"`
	// Resyncs counts the resync signals sent to it this term.
	Resyncs int `json:"resyncs"`
}

// LagList is every member's lag, GET /admin/v1/lag.
type LagList struct {
	Members []MemberLag `json:"members"`
}

// AdminError is the body of every admin error.
type AdminError struct {
	Error string `json:"error"`
}

const (
	// adminForwarded marks a request a follower relayed to the leader: a
	// member that gets one but does not lead answers 503 (leadership is
	// moving) instead of relaying it again.
	adminForwarded = "X-Litek8s-Admin-Forwarded"
	// adminLeaderWait bounds how long a change waits for a leader to be
	// known; adminTransferWait how long a transfer waits for the next one.
	adminLeaderWait   = 5 * time.Second
	adminTransferWait = 10 * time.Second
)

func (m *Member) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /admin/v1/status", m.adminFunc(m.serveStatus))
	mux.Handle("GET /admin/v1/members", m.adminFunc(m.serveMembers))
	mux.Handle("POST /admin/v1/members", m.adminFunc(m.onLeader(m.serveAddMember)))
	mux.Handle("DELETE /admin/v1/members/{id}", m.adminFunc(m.onLeader(m.serveRemoveMember)))
	mux.Handle("POST /admin/v1/members/{id}/promote", m.adminFunc(m.onLeader(m.servePromote)))
	mux.Handle("POST /admin/v1/members/{id}/demote", m.adminFunc(m.onLeader(m.serveDemote)))
	mux.Handle("POST /admin/v1/members/{id}/resync", m.adminFunc(m.onLeader(m.serveResync)))
	mux.Handle("GET /admin/v1/lag", m.adminFunc(m.onLeader(m.serveLag)))
	mux.Handle("POST /admin/v1/leader/transfer", m.adminFunc(m.onLeader(m.serveTransfer)))
	mux.Handle("GET /admin/v1/kubeconfig", m.adminFunc(m.serveKubeconfig))
	mux.Handle("GET /admin/v1/snapshot", m.adminFunc(m.serveSnapshot))
	mux.Handle("/admin/", m.adminFunc(func(w http.ResponseWriter, r *http.Request) error {
		return adminNoRoute(mux, w, r)
	}))
	return mux
}

// adminNoRoute answers a request no endpoint matched: 405 with Allow when
// the path exists for other methods, else 404.
func adminNoRoute(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) error {
	var allow []string
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := &http.Request{Method: method, URL: r.URL, Host: r.Host}
		if _, pattern := mux.Handler(probe); pattern != "/admin/" && pattern != "" {
			allow = append(allow, method)
		}
	}
	if len(allow) == 0 {
		return adminErrorf(http.StatusNotFound, "no admin endpoint %s", r.URL.Path)
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	return adminErrorf(http.StatusMethodNotAllowed, "%s %s: allowed methods are %s", r.Method, r.URL.Path,
		strings.Join(allow, ", "))
}

// adminHandlerFunc is an admin endpoint; adminFunc writes its error.
type adminHandlerFunc func(w http.ResponseWriter, r *http.Request) error

// adminFunc adapts h: an error becomes an AdminError body with the code
// adminCode picks.
func (m *Member) adminFunc(h adminHandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		code := adminCode(err)
		if code >= 500 {
			m.log.Warn("admin request failed", "method", r.Method, "path", r.URL.Path, "code", code, "err", err)
		} else {
			m.log.Debug("admin request refused", "method", r.Method, "path", r.URL.Path, "code", code, "err", err)
		}
		writeAdminJSON(w, code, AdminError{Error: err.Error()})
	})
}

// adminHTTPError is an error with its own HTTP code (bad requests).
type adminHTTPError struct {
	code int
	msg  string
}

func (e *adminHTTPError) Error() string { return e.msg }

func adminErrorf(code int, format string, args ...any) error {
	return &adminHTTPError{code: code, msg: fmt.Sprintf(format, args...)}
}

func adminCode(err error) int {
	var he *adminHTTPError
	switch {
	case errors.As(err, &he):
		return he.code
	case errors.Is(err, raftstore.ErrInvalidMember):
		return http.StatusBadRequest
	case errors.Is(err, kv.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, kv.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, kv.ErrNotLeader), errors.Is(err, kv.ErrNoLeader), errors.Is(err, kv.ErrUnknownOutcome),
		errors.Is(err, kv.ErrClosed):
		return http.StatusServiceUnavailable // retry: nothing was changed, or the change is idempotent
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout // done, but its effect not seen yet (a transfer's new leader)
	}
	return http.StatusInternalServerError
}

// onLeader runs h on the leader: a follower relays the request there.
func (m *Member) onLeader(h adminHandlerFunc) adminHandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if handled, err := m.toLeader(w, r, true); handled {
			return err
		}
		return h(w, r)
	}
}

// toLeader relays r to the leader unless this member leads, waiting up to
// adminLeaderWait for a leader when wait is set. handled reports whether
// it answered (or failed to); with no leader known and wait unset it
// leaves r to the caller.
func (m *Member) toLeader(w http.ResponseWriter, r *http.Request, wait bool) (handled bool, err error) {
	leader, self, ok := m.store.Leader()
	if !ok && wait {
		ctx, cancel := context.WithTimeout(r.Context(), adminLeaderWait)
		leader, self, err = m.store.WaitLeader(ctx)
		cancel()
		if err != nil {
			return true, err
		}
		ok = true
	}
	if !ok || self {
		return false, nil
	}
	if r.Header.Get(adminForwarded) != "" {
		return true, fmt.Errorf("member: relayed to %s, which no longer leads: %w", m.cfg.ID, kv.ErrNoLeader)
	}
	target, err := url.Parse(leader)
	if err != nil {
		return true, fmt.Errorf("member: leader URL %q: %w", leader, err)
	}
	proxy := &httputil.ReverseProxy{
		Transport: m.store.PeerClient().Transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Set(adminForwarded, m.cfg.ID)
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeAdminJSON(w, http.StatusBadGateway, AdminError{Error: fmt.Sprintf(
				"member %s: relaying to the leader at %s: %v", m.cfg.ID, leader, err)})
		},
	}
	proxy.ServeHTTP(w, r)
	return true, nil
}

func (m *Member) serveStatus(w http.ResponseWriter, r *http.Request) error {
	writeAdminJSON(w, http.StatusOK, m.status())
	return nil
}

func (m *Member) status() Status {
	st := m.store.Status()
	return Status{ID: m.cfg.ID, APIURL: m.url, RaftAddr: m.store.RaftAddr(), Role: st.Role, Term: st.Term,
		AppliedIndex: st.AppliedIndex, CommitIndex: st.CommitIndex, LastLogIndex: st.LastLogIndex,
		SnapshotIndex: st.SnapshotIndex, LeaderID: st.LeaderID, Ready: m.store.Ready(), Resyncing: st.Resyncing,
		Version: m.version}
}

func (m *Member) serveMembers(w http.ResponseWriter, r *http.Request) error {
	if handled, err := m.toLeader(w, r, false); handled {
		return err
	}
	return m.writeMembers(w)
}

// writeMembers answers with this member's view of the configuration.
func (m *Member) writeMembers(w http.ResponseWriter) error {
	ms, err := m.store.Membership()
	if err != nil {
		return err
	}
	l := MemberList{Members: make([]MemberInfo, len(ms))}
	for i, mi := range ms {
		l.Members[i] = MemberInfo{ID: mi.ID, RaftAddr: mi.RaftAddr, APIURL: mi.APIURL,
			Suffrage: string(mi.Suffrage), Leader: mi.Leader}
	}
	writeAdminJSON(w, http.StatusOK, l)
	return nil
}

func (m *Member) serveAddMember(w http.ResponseWriter, r *http.Request) error {
	var req AddMemberRequest
	if err := decodeAdminBody(r, &req, false); err != nil {
		return err
	}
	suffrage := raftstore.Voter
	if req.Suffrage != "" {
		suffrage = raftstore.Suffrage(req.Suffrage)
	}
	if err := m.store.AddMember(r.Context(), raftstore.Member{ID: req.ID, RaftAddr: req.RaftAddr,
		APIURL: req.APIURL}, suffrage); err != nil {
		return err
	}
	m.log.Info("admin: member added", "id", req.ID, "raftAddr", req.RaftAddr, "suffrage", suffrage)
	return m.writeMembers(w)
}

func (m *Member) serveRemoveMember(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := m.store.RemoveMember(r.Context(), id); err != nil {
		return err
	}
	m.log.Info("admin: member removed", "id", id)
	return m.writeMembers(w)
}

func (m *Member) servePromote(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := m.store.PromoteMember(r.Context(), id); err != nil {
		return err
	}
	m.log.Info("admin: member promoted", "id", id)
	return m.writeMembers(w)
}

func (m *Member) serveDemote(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := m.store.DemoteMember(r.Context(), id); err != nil {
		return err
	}
	m.log.Info("admin: member demoted", "id", id)
	return m.writeMembers(w)
}

func (m *Member) serveLag(w http.ResponseWriter, r *http.Request) error {
	lags, err := m.lags()
	if err != nil {
		return err
	}
	writeAdminJSON(w, http.StatusOK, LagList{Members: lags})
	return nil
}

func (m *Member) lags() ([]MemberLag, error) {
	ls, err := m.store.Lag()
	if err != nil {
		return nil, err
	}
	out := make([]MemberLag, len(ls))
	for i, l := range ls {
		out[i] = MemberLag{ID: l.ID, Applied: l.Applied, Entries: l.Entries, Seconds: l.Seconds, Resyncs: l.Resyncs}
		if !l.LastReport.IsZero() {
			out[i].LastReport = &l.LastReport
		}
	}
	return out, nil
}

// serveResync makes the leader tell a follower to resync: it fences itself
// (not ready, its watches end with 410) until it has caught up.
func (m *Member) serveResync(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if id == m.cfg.ID {
		return fmt.Errorf("member: %s is the leader, which does not resync: %w", id, kv.ErrConflict)
	}
	lags, err := m.lags()
	if err != nil {
		return err
	}
	for _, l := range lags {
		if l.ID == id {
			if err := m.store.RequestResync(id); err != nil {
				return err
			}
			m.log.Info("admin: resync requested", "id", id)
			writeAdminJSON(w, http.StatusAccepted, l)
			return nil
		}
	}
	return fmt.Errorf("member: resync: member %q: %w", id, kv.ErrNotFound)
}

func (m *Member) serveTransfer(w http.ResponseWriter, r *http.Request) error {
	var req TransferRequest
	if err := decodeAdminBody(r, &req, true); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), adminTransferWait)
	defer cancel()
	id, err := m.store.TransferLeadership(ctx, req.ID)
	if err != nil {
		return err
	}
	m.log.Info("admin: leadership transferred", "to", id)
	info := LeaderInfo{ID: id}
	if ms, err := m.store.Membership(); err == nil {
		for _, mi := range ms {
			if mi.ID == id {
				info.APIURL = mi.APIURL
			}
		}
	}
	writeAdminJSON(w, http.StatusOK, info)
	return nil
}

// serveKubeconfig answers with the admin kubeconfig this member wrote at
// start (its own URL, the cluster CA, the admin token).
func (m *Member) serveKubeconfig(w http.ResponseWriter, r *http.Request) error {
	b, err := os.ReadFile(m.kubeconfig)
	if err != nil {
		return fmt.Errorf("member: read kubeconfig: %w", err)
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(b)
	return nil
}

// serveSnapshot streams a consistent backup taken by this member (any
// member can: Backup waits for the read index first). An error before the
// first byte is an AdminError; after it, the response is aborted, so the
// client sees a broken stream rather than a short backup (whose missing
// checksum trailer would give it away anyway).
func (m *Member) serveSnapshot(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/octet-stream")
	cw := &countingWriter{w: w}
	info, err := m.store.Backup(r.Context(), cw)
	if err != nil {
		if cw.n == 0 {
			return err
		}
		m.log.Warn("admin: snapshot stream failed", "bytes", cw.n, "err", err)
		panic(http.ErrAbortHandler)
	}
	m.log.Info("admin: snapshot streamed", "index", info.Index, "objects", info.Objects, "bytes", info.Size,
		"sha256", info.SHA256)
	return nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// decodeAdminBody decodes a JSON request body into v, strictly; an empty
// body is accepted when optional.
func decodeAdminBody(r *http.Request, v any, optional bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return adminErrorf(http.StatusUnsupportedMediaType, "Content-Type %q: the admin API takes application/json", ct)
		}
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if optional && errors.Is(err, io.EOF) {
			return nil
		}
		return adminErrorf(http.StatusBadRequest, "bad request body: %v", err)
	}
	if dec.More() {
		return adminErrorf(http.StatusBadRequest, "bad request body: more than one JSON value")
	}
	return nil
}

func writeAdminJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
