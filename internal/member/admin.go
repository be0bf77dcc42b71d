package member

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/httpx"
	"github.com/litek8s/litek8s/internal/kv"
	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/raftstore"
	"github.com/litek8s/litek8s/internal/version"
)

// The admin API (/admin/v1/..., what `ctl` calls): its endpoints and wire
// types are in package adminapi. The API serves them only to requests that
// carry the admin token.

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
	mux.Handle("GET "+adminapi.PathStatus, m.adminFunc(m.serveStatus))
	mux.Handle("GET "+adminapi.PathMembers, m.adminFunc(m.serveMembers))
	mux.Handle("POST "+adminapi.PathMembers, m.adminFunc(m.onLeader(m.serveAddMember)))
	mux.Handle("DELETE "+adminapi.PathMembers+"/{id}", m.adminFunc(m.onLeader(m.serveRemoveMember)))
	mux.Handle("POST "+adminapi.PathMembers+"/{id}/promote", m.adminFunc(m.onLeader(m.servePromote)))
	mux.Handle("POST "+adminapi.PathMembers+"/{id}/demote", m.adminFunc(m.onLeader(m.serveDemote)))
	mux.Handle("POST "+adminapi.PathMembers+"/{id}/resync", m.adminFunc(m.onLeader(m.serveResync)))
	mux.Handle("GET "+adminapi.PathLag, m.adminFunc(m.onLeader(m.serveLag)))
	mux.Handle("POST "+adminapi.PathTransfer, m.adminFunc(m.onLeader(m.serveTransfer)))
	mux.Handle("GET "+adminapi.PathKubeconfig, m.adminFunc(m.serveKubeconfig))
	mux.Handle("GET "+adminapi.PathSnapshot, m.adminFunc(m.serveSnapshot))
	mux.Handle("GET "+adminapi.PathCerts, m.adminFunc(m.serveCerts))
	mux.Handle("POST "+adminapi.PathCertRotate, m.adminFunc(m.serveCertRotate))
	mux.Handle("POST "+adminapi.PathReencrypt, m.adminFunc(m.onLeader(m.serveReencrypt)))
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
		return httpx.Errorf(http.StatusNotFound, "no admin endpoint %s", r.URL.Path)
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	return httpx.Errorf(http.StatusMethodNotAllowed, "%s %s: allowed methods are %s", r.Method, r.URL.Path,
		strings.Join(allow, ", "))
}

// adminCodes maps the errors of admin endpoints to status codes.
func adminCodes() httpx.Codes {
	return httpx.Codes{Rules: []httpx.Rule{
		{Code: http.StatusBadRequest, Errs: []error{raftstore.ErrInvalidMember}},
		{Code: http.StatusNotFound, Errs: []error{kv.ErrNotFound}},
		{Code: http.StatusConflict, Errs: []error{kv.ErrConflict}},
		// retry: nothing was changed, or the change is idempotent
		{Code: http.StatusServiceUnavailable, Errs: []error{kv.ErrNotLeader, kv.ErrNoLeader, kv.ErrUnknownOutcome, kv.ErrClosed}},
		// done, but its effect not seen yet (a transfer's new leader)
		{Code: http.StatusGatewayTimeout, Errs: []error{context.DeadlineExceeded}},
	}}
}

// adminFunc adapts h: an error becomes an adminapi.Error body with the
// code adminCodes picks; 5xx are logged as warnings, other errors at debug.
func (m *Member) adminFunc(h httpx.HandlerFunc) http.Handler {
	return httpx.Adapter{Codes: adminCodes(), Log: m.log, Msg: "admin request",
		Write: func(w http.ResponseWriter, code int, err error) {
			httpx.WriteJSON(w, code, adminapi.Error{Error: err.Error()})
		}}.Handler(h)
}

// onLeader runs h on the leader: a follower relays the request there.
func (m *Member) onLeader(h httpx.HandlerFunc) httpx.HandlerFunc {
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
	fwd := httpx.Forwarder{Header: adminForwarded, From: m.cfg.ID, Transport: m.store.PeerClient().Transport,
		OnError: func(w http.ResponseWriter, leader string, err error) {
			httpx.WriteJSON(w, http.StatusBadGateway, adminapi.Error{Error: fmt.Sprintf(
				"member %s: relaying to the leader at %s: %v", m.cfg.ID, leader, err)})
		},
		Prepare: func(out *http.Request) { auth.RelayUser(out.Header, auth.UserFrom(r.Context())) }}
	if fwd.Relayed(r) {
		return true, fmt.Errorf("member: relayed to %s, which no longer leads: %w", m.cfg.ID, kv.ErrNoLeader)
	}
	if err := fwd.Forward(w, r, leader); err != nil {
		return true, fmt.Errorf("member: leader URL %q: %w", leader, err)
	}
	return true, nil
}

func (m *Member) serveStatus(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, m.status())
	return nil
}

func (m *Member) status() adminapi.Status {
	st := m.store.Status()
	return adminapi.Status{ID: m.cfg.ID, APIURL: m.url, RaftAddr: m.store.RaftAddr(), Role: st.Role, Term: st.Term,
		AppliedIndex: st.AppliedIndex, CommitIndex: st.CommitIndex, LastLogIndex: st.LastLogIndex,
		SnapshotIndex: st.SnapshotIndex, LeaderID: st.LeaderID, Ready: m.store.Ready(), Resyncing: st.Resyncing,
		Removed: st.Removed, Version: m.version, Build: new(version.Get())}
}

func (m *Member) serveMembers(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Get(adminapi.QueryLocal) == "true" {
		return m.writeMembers(w)
	}
	if handled, err := m.toLeader(w, r, false); handled {
		return err
	}
	return m.writeMembers(w)
}

// writeMembers answers with this member's view of the configuration and
// of the members removed from it.
func (m *Member) writeMembers(w http.ResponseWriter) error {
	ms, err := m.store.Membership()
	if err != nil {
		return err
	}
	l := adminapi.MemberList{Members: make([]adminapi.MemberInfo, len(ms))}
	for i, mi := range ms {
		l.Members[i] = adminapi.MemberInfo{ID: mi.ID, RaftAddr: mi.RaftAddr, APIURL: mi.APIURL,
			Suffrage: string(mi.Suffrage), Leader: mi.Leader}
	}
	rs, err := m.store.Removals()
	if err != nil {
		return err
	}
	for _, r := range rs {
		l.Removed = append(l.Removed, adminapi.RemovedMember{ID: r.ID, Reason: r.Reason, At: r.At})
	}
	httpx.WriteJSON(w, http.StatusOK, l)
	return nil
}

func (m *Member) serveAddMember(w http.ResponseWriter, r *http.Request) error {
	var req adminapi.AddMemberRequest
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
	httpx.WriteJSON(w, http.StatusOK, adminapi.LagList{Members: lags})
	return nil
}

func (m *Member) lags() ([]adminapi.MemberLag, error) {
	ls, err := m.store.Lag()
	if err != nil {
		return nil, err
	}
	out := make([]adminapi.MemberLag, len(ls))
	for i, l := range ls {
		out[i] = adminapi.MemberLag{ID: l.ID, Applied: l.Applied, Entries: l.Entries, Seconds: l.Seconds, Resyncs: l.Resyncs}
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
	l, err := m.running(r.Context(), id, "resync")
	if err != nil {
		return err
	}
	{
		{
			if err := m.store.RequestResync(id); err != nil {
				return err
			}
			m.log.Info("admin: resync requested", "id", id)
			httpx.WriteJSON(w, http.StatusAccepted, l)
			return nil
		}
	}
}

// running returns the leader's view of member id when the member reported
// to it lately; else a 409 saying it is down or cut off (what a resync or
// a transfer to it needs), or 404 when it is not a member. A member not
// heard from yet this term (a new leader's first half second) gets until
// it is overdue to report.
func (m *Member) running(ctx context.Context, id, verb string) (adminapi.MemberLag, error) {
	overdue := max(4*m.cfg.Store.LagReportInterval, 2*time.Second)
	deadline := time.Now().Add(overdue)
	for {
		lags, err := m.lags()
		if err != nil {
			return adminapi.MemberLag{}, err
		}
		i := slices.IndexFunc(lags, func(l adminapi.MemberLag) bool { return l.ID == id })
		if i < 0 {
			return adminapi.MemberLag{}, fmt.Errorf("member: %s: no member %q in the configuration: %w", verb, id,
				kv.ErrNotFound)
		}
		l := lags[i]
		switch {
		case id == m.cfg.ID:
			return l, nil
		case l.LastReport != nil && time.Since(*l.LastReport) <= overdue:
			return l, nil
		case l.LastReport != nil:
			return l, httpx.Errorf(http.StatusConflict, "%s: member %s last reported to the leader %s ago: "+
				"it is down or cut off (start it, or remove it with ctl members remove %s)", verb, id,
				time.Since(*l.LastReport).Round(time.Second), id)
		case time.Now().After(deadline):
			return l, httpx.Errorf(http.StatusConflict, "%s: member %s has not reported to the leader since it "+
				"took over: it is down or cut off (start it, or remove it with ctl members remove %s)", verb, id, id)
		}
		select {
		case <-ctx.Done():
			return l, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (m *Member) serveTransfer(w http.ResponseWriter, r *http.Request) error {
	var req adminapi.TransferRequest
	if err := decodeAdminBody(r, &req, true); err != nil {
		return err
	}
	if m.isVoter(req.ID) && req.ID != m.cfg.ID {
		// the store refuses others (unknown, nonvoter) itself
		if _, err := m.running(r.Context(), req.ID, "leader transfer"); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), adminTransferWait)
	defer cancel()
	id, err := m.store.TransferLeadership(ctx, req.ID)
	if err != nil && adminCodes().Of(err) == http.StatusInternalServerError {
		// Raft's own failure (the target stopped answering): say what
		// failed, and not as a server fault
		return httpx.Errorf(http.StatusConflict, "leader transfer to %s failed: %v", orAny(req.ID), err)
	}
	if err != nil {
		return err
	}
	m.log.Info("admin: leadership transferred", "to", id)
	info := adminapi.LeaderInfo{ID: id}
	if ms, err := m.store.Membership(); err == nil {
		for _, mi := range ms {
			if mi.ID == id {
				info.APIURL = mi.APIURL
			}
		}
	}
	httpx.WriteJSON(w, http.StatusOK, info)
	return nil
}

// isVoter reports whether id is a voter of the configuration.
func (m *Member) isVoter(id string) bool {
	ms, err := m.store.Membership()
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ms, func(mi raftstore.MemberInfo) bool {
		return mi.ID == id && mi.Suffrage == raftstore.Voter
	})
}

func orAny(id string) string {
	if id == "" {
		return "the most up-to-date voter"
	}
	return id
}

// serveKubeconfig answers with a new admin kubeconfig for this member (its
// own URL, the cluster CA, a client certificate of auth.AdminUser in
// system:masters valid for ?ttl=, a year by default).
func (m *Member) serveKubeconfig(w http.ResponseWriter, r *http.Request) error {
	ttl := AdminKubeconfigTTL
	if q := r.URL.Query().Get("ttl"); q != "" {
		d, err := time.ParseDuration(q)
		if err != nil || d < time.Minute {
			return httpx.Errorf(http.StatusBadRequest, "ttl %q: want a duration of a minute or more", q)
		}
		ttl = d
	}
	b, err := adminKubeconfig(m.url, m.kubeconfigSecrets(), ttl)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(b)
	return nil
}

// serveSnapshot streams a consistent backup taken by this member (any
// member can: Backup waits for the read index first). An error before the
// first byte is an adminapi.Error; after it, the response is aborted, so the
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
			return httpx.Errorf(http.StatusUnsupportedMediaType, "Content-Type %q: the admin API takes application/json", ct)
		}
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if optional && errors.Is(err, io.EOF) {
			return nil
		}
		return httpx.Errorf(http.StatusBadRequest, "bad request body: %v", err)
	}
	if dec.More() {
		return httpx.Errorf(http.StatusBadRequest, "bad request body: more than one JSON value")
	}
	return nil
}
