package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"sigs.k8s.io/yaml"

	"github.com/litek8s/litek8s/internal/audit"
	"github.com/litek8s/litek8s/internal/auth"
)

// The audit log (Config.Audit, package audit) as kube-apiserver's
// WithAudit filter writes it. authenticate calls auditBegin once the user
// is known and before impersonation, so that the policy matches the
// authenticated user and impersonatedUser is recorded; without a policy
// nothing here runs. A request a follower relays to the leader is audited
// on the follower, which received it, with the real user and the leader's
// answer; the leader does not audit it again (auditBegin skips requests
// that a member certificate relays).

// auditIDHeader is kube's Audit-Id header: a client may give the request's
// audit ID, and every answer carries it.
const auditIDHeader = "Audit-Id"

// maxAuditBody bounds the request and response bodies an event carries;
// a larger one is left out of the event.
const maxAuditBody = 4 << 20

type auditKey struct{}

// auditRecord is the audit state of one request.
type auditRecord struct {
	log         *audit.Log
	cfg         audit.RequestConfig
	longRunning bool

	mu      sync.Mutex // guards ev, reqBody, keepReq and started; taken before the Log's own
	ev      auditv1.Event
	reqBody bytes.Buffer // what the handler read of the body, when kept
	keepReq bool
	reqType string // the body's media type
	started bool   // ResponseStarted was reached
}

// auditBegin starts the audit of r by user u: it returns the writer and
// request the rest of the chain uses and the function to defer, which
// writes the final event (nil: this request is not audited).
func (s *Server) auditBegin(w http.ResponseWriter, r *http.Request, u *auth.User) (http.ResponseWriter, *http.Request, func()) {
	if s.relayed(r) {
		return w, r, nil
	}
	id := r.Header.Get(auditIDHeader)
	if id == "" {
		id = uuid.NewString()
	}
	w.Header().Set(auditIDHeader, id)
	attrs := auditAttributes(r, u)
	cfg := s.cfg.Audit.Policy().Evaluate(attrs)
	if cfg.Level == auditv1.LevelNone {
		return w, r, nil
	}
	now := metav1.NewMicroTime(s.cfg.Now())
	rec := &auditRecord{log: s.cfg.Audit, cfg: cfg, longRunning: isWatch(r) || isLongRunning(r) || attrs.Verb == "watch"}
	rec.ev = auditv1.Event{Level: cfg.Level, AuditID: types.UID(id), Stage: auditv1.StageRequestReceived,
		RequestURI: r.URL.RequestURI(), Verb: attrs.Verb, User: userInfo(u), UserAgent: r.UserAgent(),
		RequestReceivedTimestamp: now, StageTimestamp: now}
	for _, ip := range utilnet.SourceIPs(r) {
		rec.ev.SourceIPs = append(rec.ev.SourceIPs, ip.String())
	}
	if attrs.ResourceRequest {
		rec.ev.ObjectRef = &auditv1.ObjectReference{Resource: attrs.Resource, Namespace: attrs.Namespace,
			Name: attrs.Name, APIGroup: attrs.APIGroup, APIVersion: attrs.APIVersion, Subresource: attrs.Subresource}
	}
	// The body is kept for the request object, and for a create's name.
	rec.keepReq = r.Body != nil && r.Body != http.NoBody &&
		(audit.AtLeast(cfg.Level, auditv1.LevelRequest) || attrs.Verb == "create")
	if rec.keepReq {
		r.Body = &teeBody{ReadCloser: r.Body, rec: rec}
		rec.reqType, _, _ = mime.ParseMediaType(r.Header.Get("Content-Type"))
	}
	rec.emit(s, auditv1.StageRequestReceived)
	aw := &auditWriter{ResponseWriter: w, rec: rec, s: s}
	r = r.WithContext(context.WithValue(r.Context(), auditKey{}, rec))
	return aw, r, func() {
		if p := recover(); p != nil {
			rec.mu.Lock()
			rec.ev.ResponseStatus = &metav1.Status{Code: http.StatusInternalServerError, Status: metav1.StatusFailure,
				Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("APIServer panic'd: %v", p)}
			rec.mu.Unlock()
			rec.emit(s, auditv1.StagePanic)
			panic(p)
		}
		aw.complete()
	}
}

// auditUnauthenticated records a request whose credentials proved nothing
// as kube's WithFailedAuthenticationAudit does: one ResponseStarted event
// with code 401, no user, and the methods tried, where the policy (which
// no users or userGroups rule matches) says.
func (s *Server) auditUnauthenticated(r *http.Request) {
	attrs := auditAttributes(r, nil)
	cfg := s.cfg.Audit.Policy().Evaluate(attrs)
	if cfg.Level == auditv1.LevelNone {
		return
	}
	now := metav1.NewMicroTime(s.cfg.Now())
	rec := &auditRecord{log: s.cfg.Audit, cfg: cfg}
	rec.ev = auditv1.Event{Level: cfg.Level, AuditID: types.UID(uuid.NewString()), RequestURI: r.URL.RequestURI(),
		Verb: attrs.Verb, UserAgent: r.UserAgent(), RequestReceivedTimestamp: now,
		ResponseStatus: &metav1.Status{Code: http.StatusUnauthorized, Message: "Authentication failed, attempted: bearer, x509"}}
	for _, ip := range utilnet.SourceIPs(r) {
		rec.ev.SourceIPs = append(rec.ev.SourceIPs, ip.String())
	}
	if attrs.ResourceRequest {
		rec.ev.ObjectRef = &auditv1.ObjectReference{Resource: attrs.Resource, Namespace: attrs.Namespace,
			Name: attrs.Name, APIGroup: attrs.APIGroup, APIVersion: attrs.APIVersion, Subresource: attrs.Subresource}
	}
	rec.emit(s, auditv1.StageResponseStarted)
}

// relayed reports whether r is a write another member relays (a member
// certificate with the user it relays): its receiver audits it.
func (s *Server) relayed(r *http.Request) bool {
	if r.Header.Get(forwardedHeader) == "" || r.Header.Get(auth.RemoteUserHeader) == "" {
		return false
	}
	cert := auth.VerifiedCert(r)
	if cert == nil || s.cfg.MemberOrg == "" {
		return false
	}
	for _, o := range cert.Subject.Organization {
		if o == s.cfg.MemberOrg {
			return true
		}
	}
	return false
}

// auditImpersonated records the user a request acts as.
func auditImpersonated(ctx context.Context, u *auth.User) {
	if rec, ok := ctx.Value(auditKey{}).(*auditRecord); ok {
		ui := userInfo(u)
		rec.mu.Lock()
		rec.ev.ImpersonatedUser = &ui
		rec.mu.Unlock()
	}
}

// Kube's authorization annotations.
const (
	decisionAnnotation = "authorization.k8s.io/decision"
	reasonAnnotation   = "authorization.k8s.io/reason"
)

// auditDecision records the authorizer's decision on the request.
func auditDecision(ctx context.Context, allowed bool, reason string) {
	rec, ok := ctx.Value(auditKey{}).(*auditRecord)
	if !ok {
		return
	}
	d := "forbid"
	if allowed {
		d = "allow"
	}
	rec.mu.Lock()
	if rec.ev.Annotations == nil {
		rec.ev.Annotations = map[string]string{}
	}
	rec.ev.Annotations[decisionAnnotation], rec.ev.Annotations[reasonAnnotation] = d, reason
	rec.mu.Unlock()
}

// emit writes the event at stage unless the policy omits it.
func (rec *auditRecord) emit(s *Server, stage auditv1.Stage) {
	if rec.cfg.Omits(stage) {
		return
	}
	rec.mu.Lock()
	rec.ev.Stage, rec.ev.StageTimestamp = stage, metav1.NewMicroTime(s.cfg.Now())
	err := rec.log.Write(&rec.ev)
	rec.mu.Unlock()
	if err != nil {
		s.log.Error("audit", "err", err, "auditID", rec.ev.AuditID)
	}
}

// teeBody keeps what the handler reads of a request body (bounded by the
// body limit, limits.go).
type teeBody struct {
	io.ReadCloser
	rec *auditRecord
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		t.rec.mu.Lock()
		if t.rec.reqBody.Len()+n <= maxAuditBody {
			t.rec.reqBody.Write(p[:n])
		} else {
			t.rec.keepReq = false
		}
		t.rec.mu.Unlock()
	}
	return n, err
}

// auditWriter records the answer's code (ResponseStarted for long-running
// requests) and, where the event carries it, its body.
type auditWriter struct {
	http.ResponseWriter
	rec  *auditRecord
	s    *Server
	code int
	// body is the answer, kept at RequestResponse and for errors (their
	// Status); keep is decided at the header.
	body bytes.Buffer
	keep bool
	ct   string // the answer's media type
}

func (aw *auditWriter) WriteHeader(code int) {
	if aw.code == 0 {
		aw.code = code
		ct, _, _ := mime.ParseMediaType(aw.Header().Get("Content-Type"))
		aw.ct = ct
		aw.keep = (ct == "application/json" || ct == protobufType) && ((audit.AtLeast(aw.rec.cfg.Level, auditv1.LevelRequestResponse) && !aw.rec.longRunning) || code >= 400)
		if aw.rec.longRunning {
			aw.rec.mu.Lock()
			aw.rec.ev.ResponseStatus = &metav1.Status{Code: int32(code)}
			aw.rec.started = true
			aw.rec.mu.Unlock()
			aw.rec.emit(aw.s, auditv1.StageResponseStarted)
		}
	}
	aw.ResponseWriter.WriteHeader(code)
}

func (aw *auditWriter) Write(b []byte) (int, error) {
	if aw.code == 0 {
		aw.WriteHeader(http.StatusOK)
	}
	if aw.keep {
		if aw.body.Len()+len(b) <= maxAuditBody {
			aw.body.Write(b)
		} else {
			aw.keep = false
		}
	}
	return aw.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines, hijacking).
func (aw *auditWriter) Unwrap() http.ResponseWriter { return aw.ResponseWriter }

// complete writes the ResponseComplete event once the handler returned.
func (aw *auditWriter) complete() {
	rec := aw.rec
	rec.mu.Lock()
	if rec.ev.ResponseStatus == nil && rec.longRunning && !rec.started {
		// kube's "fake it": a long-running request that never answered
		rec.ev.ResponseStatus = &metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"}
		rec.mu.Unlock()
		rec.emit(aw.s, auditv1.StageResponseStarted)
		rec.mu.Lock()
	}
	code := aw.code
	switch {
	case code != 0:
		rec.ev.ResponseStatus = &metav1.Status{Code: int32(code)}
	case rec.ev.ResponseStatus == nil: // kube's "fake it", hijacked connections too
		rec.ev.ResponseStatus = &metav1.Status{Code: http.StatusOK, Status: metav1.StatusSuccess, Message: "Connection closed early"}
	}
	var body []byte
	if aw.keep {
		body, aw.keep = aw.s.auditJSON(aw.ct, bytes.TrimSpace(aw.body.Bytes()))
	}
	if aw.keep && code >= 400 {
		var st metav1.Status
		if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
			rec.ev.ResponseStatus = &metav1.Status{Status: st.Status, Message: st.Message, Reason: st.Reason,
				Details: st.Details, Code: int32(code)}
		}
	}
	if rec.keepReq {
		rec.requestObject(aw.s)
	}
	if aw.keep && audit.AtLeast(rec.cfg.Level, auditv1.LevelRequestResponse) && len(body) > 0 {
		rec.ev.ResponseObject = &runtime.Unknown{Raw: rec.object(body),
			ContentType: runtime.ContentTypeJSON}
	}
	rec.mu.Unlock()
	rec.emit(aw.s, auditv1.StageResponseComplete)
}

// requestObject fills the create's name (kube's LogRequestObject, at
// Metadata too) and, at Request and above, the request object: JSON as
// sent, YAML (an apply patch) and protobuf (kubectl create, controllers)
// as JSON. Caller must hold rec.mu.
func (rec *auditRecord) requestObject(s *Server) {
	raw := bytes.TrimSpace(rec.reqBody.Bytes())
	if len(raw) == 0 {
		return
	}
	raw, ok := s.auditJSON(rec.reqType, raw)
	if !ok {
		return
	}
	if ref := rec.ev.ObjectRef; ref != nil && rec.ev.Verb == "create" {
		if ref.Name == "" {
			ref.Name = gjson.GetBytes(raw, "metadata.name").String()
		}
		if ref.Namespace == "" {
			ref.Namespace = gjson.GetBytes(raw, "metadata.namespace").String()
		}
	}
	if audit.AtLeast(rec.cfg.Level, auditv1.LevelRequest) {
		rec.ev.RequestObject = &runtime.Unknown{Raw: rec.object(raw), ContentType: runtime.ContentTypeJSON}
	}
}

// auditJSON is a body of media type mt as JSON: JSON as it is, YAML (an
// apply patch) converted, protobuf (kubectl create, controllers) decoded
// and encoded as JSON.
func (s *Server) auditJSON(mt string, raw []byte) ([]byte, bool) {
	switch {
	case mt == protobufType:
		obj, gvk, err := s.codecs.proto.Decode(raw, nil, nil)
		if err != nil {
			return nil, false
		}
		obj.GetObjectKind().SetGroupVersionKind(*gvk)
		b, err := json.Marshal(obj)
		return b, err == nil
	case len(raw) > 0 && raw[0] != '{' && raw[0] != '[':
		b, err := yaml.YAMLToJSON(raw)
		return b, err == nil && json.Valid(b)
	}
	return raw, json.Valid(raw)
}

const protobufType = "application/vnd.kubernetes.protobuf"

// object is raw without managedFields when the policy omits them (in an
// object, or in the items of a list).
func (rec *auditRecord) object(raw []byte) []byte {
	if !rec.cfg.OmitManagedFields || !bytes.Contains(raw, []byte(`"managedFields"`)) {
		return raw
	}
	var o map[string]any
	if json.Unmarshal(raw, &o) != nil {
		return raw
	}
	dropManagedFields(o)
	if items, ok := o["items"].([]any); ok {
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				dropManagedFields(m)
			}
		}
	}
	if b, err := json.Marshal(o); err == nil {
		return b
	}
	return raw
}

func dropManagedFields(o map[string]any) {
	if md, ok := o["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
}
