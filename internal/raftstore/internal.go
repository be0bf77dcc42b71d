package raftstore

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/litek8s/litek8s/internal/kv"
)

// Internal endpoints between members, served under the API listener.
const (
	pathReadIndex = "/internal/v1/readindex"
	pathJoin      = "/internal/v1/join"
	pathSecrets   = "/internal/v1/secrets"
	pathHello     = "/internal/v1/hello"

	readIndexTimeout = 5 * time.Second
)

// InternalHandler serves the endpoints other members call: the read index
// (leader) and join (any member; forwarded to the leader), for members
// only (PeerAuth); the join secrets, for whoever has the join token; and
// hello, for anyone.
func (s *Store) InternalHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+pathReadIndex, s.membersOnly(s.serveReadIndex))
	mux.Handle("POST "+pathJoin, s.membersOnly(s.serveJoin))
	mux.Handle("POST "+pathLag, s.membersOnly(s.serveLag))
	mux.HandleFunc("GET "+pathSecrets, s.serveSecrets)
	mux.HandleFunc("GET "+pathHello, s.serveHello)
	return mux
}

// membersOnly lets through the calls PeerAuth accepts.
func (s *Store) membersOnly(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.PeerAuth == nil {
			http.Error(w, "not a member of this cluster: no peer authentication configured", http.StatusForbidden)
			return
		}
		if err := s.cfg.PeerAuth(r); err != nil {
			http.Error(w, "not a member of this cluster: "+err.Error(), http.StatusForbidden)
			return
		}
		next(w, r)
	})
}

// Hello is what any member tells anyone about itself (GET
// /internal/v1/hello): enough to decide who bootstraps a new cluster and
// whether a peer belongs to another cluster.
type Hello struct {
	ID string `json:"id"`
	// ClusterID is empty while the member belongs to no cluster yet.
	ClusterID string `json:"clusterID"`
	// CA is the cluster CA's certificate (PEM; public): a joiner that was
	// given the CA's hash checks it, then verifies the member with it.
	CA string `json:"ca,omitempty"`
}

func (s *Store) serveHello(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, Hello{ID: s.cfg.ID, ClusterID: s.cfg.ClusterID, CA: string(s.cfg.ClusterCA)})
}

func (s *Store) serveReadIndex(w http.ResponseWriter, r *http.Request) {
	idx, err := s.leaderReads.get(r.Context())
	if err != nil {
		writeInternalError(w, err)
		return
	}
	writeJSON(w, map[string]uint64{"index": idx})
}

// decodeBody decodes a small JSON request body.
func decodeBody(r *http.Request, v any) error {
	return json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(v)
}

func (s *Store) serveJoin(w http.ResponseWriter, r *http.Request) {
	var m Member
	if err := decodeBody(r, &m); err != nil {
		http.Error(w, "bad join request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var err error
	switch {
	case s.IsLeader() && m.Nonvoter:
		err = s.addNonvoter(r.Context(), m)
	case s.IsLeader():
		err = s.addMember(r.Context(), m)
	default:
		err = s.callLeader(r.Context(), http.MethodPost, pathJoin, m, nil)
	}
	if err != nil {
		writeInternalError(w, err)
		return
	}
	writeJSON(w, map[string]string{})
}

func (s *Store) serveSecrets(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || s.cfg.JoinToken == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.JoinToken)) != 1 {
		http.Error(w, "the join token is not this cluster's", http.StatusUnauthorized)
		return
	}
	if s.cfg.JoinSecrets == nil {
		http.Error(w, "this member hands out no secrets", http.StatusNotFound)
		return
	}
	b, err := s.cfg.JoinSecrets()
	if err != nil {
		writeInternalError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// writeInternalError answers with a status peers map back to kv errors.
func writeInternalError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, kv.ErrNotLeader):
		code = http.StatusMisdirectedRequest
	case errors.Is(err, kv.ErrNoLeader), errors.Is(err, kv.ErrUnknownOutcome), errors.Is(err, kv.ErrClosed):
		code = http.StatusServiceUnavailable
	}
	http.Error(w, err.Error(), code)
}

// callLeader sends an internal request to the current leader.
func (s *Store) callLeader(ctx context.Context, method, path string, in, out any) error {
	wctx, cancel := context.WithTimeout(ctx, readIndexTimeout)
	defer cancel()
	leader, self, err := s.WaitLeader(wctx)
	if err != nil {
		return err
	}
	if self {
		return kv.ErrNotLeader // leadership moved here while we asked; caller retries
	}
	return callMember(ctx, s.cfg.Peer, leader, "", method, path, in, out)
}

// callMember sends one internal request to the member at baseURL, with
// token as a bearer token unless it is empty (members authenticate with
// their certificates).
func callMember(ctx context.Context, c *http.Client, baseURL, token, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(baseURL, "/")+path, body)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil { // the member cannot be reached: for the caller, no leader right now
		return fmt.Errorf("raftstore: %s %s: %w (%w)", method, path, kv.ErrNoLeader, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return decodeJSON(resp, out)
	case http.StatusMisdirectedRequest:
		return kv.ErrNotLeader
	case http.StatusServiceUnavailable:
		return kv.ErrNoLeader
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return &refusedError{fmt.Sprintf("raftstore: %s %s%s: %s: %s", method, baseURL, path, resp.Status, bytes.TrimSpace(msg))}
}

// refusedError is a definitive refusal by a member (bad token, bad request),
// as opposed to a member that cannot be reached or has no leader yet.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *refusedError) Unwrap() error { return ErrRefused }

// ErrRefused: a member refused an internal call (bad token, bad request);
// retrying will not help.
var ErrRefused = errors.New("refused by the member")

// FetchHello asks the member at baseURL who it is (no authentication).
func FetchHello(ctx context.Context, c *http.Client, baseURL string) (Hello, error) {
	var h Hello
	err := callMember(ctx, c, baseURL, "", http.MethodGet, pathHello, nil, &h)
	return h, err
}

// FetchSecrets asks the member at seedURL for the join secrets.
func FetchSecrets(ctx context.Context, c *http.Client, seedURL, token string) ([]byte, error) {
	var raw json.RawMessage
	if err := callMember(ctx, c, seedURL, token, http.MethodGet, pathSecrets, nil, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Join asks the member at seedURL to add this member to its cluster,
// retrying while the seed cannot be reached or knows no leader, until ctx
// ends. A refusal (bad token) ends it at once.
func (s *Store) Join(ctx context.Context, seedURL string) error {
	for {
		err := callMember(ctx, s.cfg.Peer, seedURL, "", http.MethodPost, pathJoin, s.self(), nil)
		var refused *refusedError
		if err == nil || errors.As(err, &refused) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("raftstore: join %s: %w", seedURL, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
