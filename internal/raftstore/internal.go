package raftstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/litek8s/litek8s/internal/httpx"
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
	// Errors are plain text with the codes internalCodes picks, which
	// callMember maps back (answerError).
	a := httpx.Adapter{Codes: internalCodes(), Write: httpx.PlainText}
	mux := http.NewServeMux()
	mux.Handle("GET "+pathReadIndex, a.Handler(s.membersOnly(s.serveReadIndex)))
	mux.Handle("POST "+pathJoin, a.Handler(s.membersOnly(s.serveJoin)))
	mux.Handle("POST "+pathLag, a.Handler(s.membersOnly(s.serveLag)))
	mux.Handle("POST "+pathRemoved, a.Handler(s.membersOnly(s.serveRemoved)))
	mux.Handle("POST "+pathSnapshot, a.Handler(s.membersOnly(s.serveSnapshot)))
	mux.Handle("GET "+pathSecrets, a.Handler(s.serveSecrets))
	mux.Handle("GET "+pathHello, a.Handler(s.serveHello))
	return mux
}

// membersOnly lets through the calls PeerAuth accepts.
func (s *Store) membersOnly(next httpx.HandlerFunc) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.PeerAuth == nil {
			return httpx.Errorf(http.StatusForbidden, "not a member of this cluster: no peer authentication configured")
		}
		if err := s.cfg.PeerAuth(r); err != nil {
			return httpx.Errorf(http.StatusForbidden, "not a member of this cluster: %s", err)
		}
		return next(w, r)
	}
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

func (s *Store) serveHello(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, Hello{ID: s.cfg.ID, ClusterID: s.cfg.ClusterID, CA: string(s.cfg.ClusterCA)})
	return nil
}

func (s *Store) serveReadIndex(w http.ResponseWriter, r *http.Request) error {
	idx, err := s.leaderReads.get(r.Context())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]uint64{"index": idx})
	return nil
}

// decodeBody decodes a small JSON request body.
func decodeBody(r *http.Request, v any) error {
	return json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(v)
}

func (s *Store) serveJoin(w http.ResponseWriter, r *http.Request) error {
	var m Member
	if err := decodeBody(r, &m); err != nil {
		return httpx.Errorf(http.StatusBadRequest, "bad join request: %s", err)
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
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{})
	return nil
}

func (s *Store) serveSecrets(w http.ResponseWriter, r *http.Request) error {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || s.cfg.VerifyJoinToken == nil {
		return httpx.Errorf(http.StatusUnauthorized, "the join token is not this cluster's")
	}
	if err := s.cfg.VerifyJoinToken(r.Context(), strings.TrimSpace(tok)); errors.Is(err, ErrBadJoinToken) {
		return httpx.Errorf(http.StatusUnauthorized, "%s", err)
	} else if err != nil {
		return err
	}
	if s.cfg.JoinSecrets == nil {
		return httpx.Errorf(http.StatusNotFound, "this member hands out no secrets")
	}
	b, err := s.cfg.JoinSecrets()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
	return nil
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
	if resp.StatusCode == http.StatusOK {
		return decodeJSON(resp, out)
	}
	return answerError(method, baseURL, path, resp)
}

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
