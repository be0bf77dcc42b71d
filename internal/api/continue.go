package api

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/litek8s/litek8s/internal/kv"
)

// Continue tokens of paginated lists, and their expiry.
//
// kube-apiserver serves every page of a list from the revision of its
// first page until etcd compacts that revision away (its compactor runs
// every five minutes); a page asked for after that is 410 Expired, and the
// Status carries an "inconsistent" token that continues from the same key
// at the current revision. litek8s keeps earlier states in memory for a
// while (the store's past views) and has no compaction in time of its own,
// so a token also expires once it is older than Config.ContinueTTL: the
// same bound clients meet against kube, whatever the store still keeps.

// continueToken is kube's continue format: base64 of
// {"v":"meta.k8s.io/v1","rv":N,"start":"/<name>\u0000"} ("/<namespace>/<name>"
// in an all-namespaces list). rv -1 is kube's inconsistent token: continue
// at the current revision.
type continueToken struct {
	V     string `json:"v"`
	RV    int64  `json:"rv"`
	Start string `json:"start"`
	// Offset is litek8s's: the number of objects before Start in the list
	// (remainingItemCount without walking the rest).
	Offset int64 `json:"offset,omitempty"`
	// At is litek8s's: when revision RV was read for the list's first page
	// (Unix seconds), which is how old the token is. 0: unknown (a token
	// made elsewhere), then only the store's own bound applies.
	At int64 `json:"at,omitempty"`
}

// inconsistentRV is the rv of kube's inconsistent continue token.
const inconsistentRV = -1

// defaultContinueTTL is kube-apiserver's default etcd compaction interval
// (storagebackend.DefaultCompactInterval).
const defaultContinueTTL = 5 * time.Minute

// continueTTL is how long a continue token stays consistent.
func (s *Server) continueTTL() time.Duration {
	if s.cfg.ContinueTTL > 0 {
		return s.cfg.ContinueTTL
	}
	return defaultContinueTTL
}

// expired reports whether t's revision is older than ttl at now.
func (t *continueToken) expired(now time.Time, ttl time.Duration) bool {
	return t.RV > 0 && t.At > 0 && now.Sub(time.Unix(t.At, 0)) > ttl
}

// expiredContinue is kube's 410 for a continue token whose revision is
// gone: its metadata.continue continues from the same key at the current
// revision (etcd3's handleCompactedErrorForPaging).
func expiredContinue(t *continueToken) error {
	b, _ := json.Marshal(continueToken{V: "meta.k8s.io/v1", RV: inconsistentRV, Start: "/" + t.Start + "\x00"})
	err := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	err.ErrStatus.ListMeta.Continue = base64.RawURLEncoding.EncodeToString(b)
	return err
}

// encodeContinue is the token of the page after last, read at revision rev
// at Unix second at, with offset objects before it.
func encodeContinue(rev uint64, last *kv.Object, namespace string, offset, at int64) string {
	start := "/" + continueStart(last.Key, namespace) // kube's etcd key after the list's prefix
	b, _ := json.Marshal(continueToken{V: "meta.k8s.io/v1", RV: int64(rev), Start: start + "\x00", Offset: offset, At: at})
	return base64.RawURLEncoding.EncodeToString(b)
}

// continueStart is where a list continues after k: "namespace/name" in a
// list of all namespaces, else the name.
func continueStart(k kv.Key, namespace string) string {
	if namespace == "" && k.Namespace != "" {
		return k.Namespace + "/" + k.Name
	}
	return k.Name
}

// decodeContinue parses a token; 400 for one kube would not accept (rv 0,
// an empty or unterminated start key) or that is not a token at all.
func decodeContinue(s string) (*continueToken, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	var t continueToken
	if err != nil || json.Unmarshal(b, &t) != nil || t.V != "meta.k8s.io/v1" || !strings.HasSuffix(t.Start, "\x00") ||
		t.Offset < 0 || t.At < 0 || (t.RV <= 0 && t.RV != inconsistentRV) {
		return nil, badRequest("invalid continue token: continue key is not valid: %q", s)
	}
	t.Start = strings.TrimPrefix(strings.TrimSuffix(t.Start, "\x00"), "/")
	return &t, nil
}
