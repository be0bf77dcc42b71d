package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ErrUnauthorized is a request with credentials that prove nothing (a
// wrong token, an expired ServiceAccount token), or with none when
// anonymous requests are off: kube's 401.
var ErrUnauthorized = errors.New("auth: unauthorized")

// Headers through which a member relays the user of a request it forwards
// to the leader. They are believed only on a connection that presents a
// member certificate (organization MemberOrg) and ignored otherwise.
const (
	RemoteUserHeader  = "X-Litek8s-Remote-User"
	RemoteUIDHeader   = "X-Litek8s-Remote-Uid"
	RemoteGroupHeader = "X-Litek8s-Remote-Group"
	// RemoteExtraHeaderPrefix + the path-escaped key relays one extra
	// (kube's X-Remote-Extra-); keys are read back lower-cased.
	RemoteExtraHeaderPrefix = "X-Litek8s-Remote-Extra-"
)

// RelayUser makes a request a member relays to the leader carry its user
// u, for the leader to authorize again (it believes the headers from a
// member certificate only); any such headers the client sent are dropped.
func RelayUser(h http.Header, u *User) {
	for _, k := range []string{RemoteUserHeader, RemoteUIDHeader, RemoteGroupHeader,
		"Impersonate-User", "Impersonate-Group", "Impersonate-Uid"} {
		h.Del(k)
	}
	for k := range h {
		if strings.HasPrefix(k, http.CanonicalHeaderKey(RemoteExtraHeaderPrefix)) || strings.HasPrefix(k, "Impersonate-Extra-") {
			h.Del(k)
		}
	}
	if u == nil {
		return
	}
	h.Set(RemoteUserHeader, u.Name)
	if u.UID != "" {
		h.Set(RemoteUIDHeader, u.UID)
	}
	for _, g := range u.Groups {
		h.Add(RemoteGroupHeader, g)
	}
	for k, vs := range u.Extra {
		for _, v := range vs {
			h.Add(RemoteExtraHeaderPrefix+url.PathEscape(k), v)
		}
	}
}

// Authenticator tells who made a request.
type Authenticator struct {
	// AdminTokenHash (HashToken) verifies the admin token, which
	// authenticates AdminUser in system:masters; empty: no admin token.
	AdminTokenHash string
	// LoopbackToken authenticates LoopbackUser in system:masters: the
	// member's own clients (its controllers). Random for each process and
	// never written anywhere (kube-apiserver's loopback token).
	LoopbackToken string
	// Tokens are the static tokens (a token file): token → user.
	Tokens map[string]*User
	// ServiceAccounts verifies ServiceAccount tokens (nil: none).
	ServiceAccounts *ServiceAccountTokens
	// Bootstrap verifies bootstrap tokens (nil: none).
	Bootstrap *BootstrapTokens
	// MemberOrg is the organization of member certificates: a member is
	// not a user, but relays one (RemoteUserHeader).
	MemberOrg string
	// Anonymous lets requests without credentials through as
	// system:anonymous (kube's --anonymous-auth, on by default); RBAC then
	// decides. Off, they get 401, except on AnonymousPaths.
	Anonymous bool
	// AnonymousPaths are served to anyone (health and version).
	AnonymousPaths []string
}

// Authenticate returns the user of r. Client certificates must have been
// verified against the cluster CA by the TLS listener.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (*User, error) {
	if cert := VerifiedCert(r); cert != nil {
		if a.MemberOrg != "" && slices.Contains(cert.Subject.Organization, a.MemberOrg) {
			if name := r.Header.Get(RemoteUserHeader); name != "" {
				return &User{Name: name, UID: r.Header.Get(RemoteUIDHeader), Groups: r.Header.Values(RemoteGroupHeader),
					Extra: relayedExtra(r.Header)}, nil
			}
		} else if _, hasToken := bearer(r); !hasToken {
			// a user's certificate: user = CN, groups = O
			groups := append(slices.Clone(cert.Subject.Organization), GroupAuthenticated)
			return &User{Name: cert.Subject.CommonName, Groups: groups}, nil
		}
	}
	tok, ok := bearer(r)
	if !ok {
		if a.Anonymous || slices.Contains(a.AnonymousPaths, r.URL.Path) {
			return &User{Name: Anonymous, Groups: []string{GroupUnauthenticated}}, nil
		}
		return nil, ErrUnauthorized
	}
	u, _, err := a.AuthenticateToken(ctx, tok, nil)
	return u, err
}

// AuthenticateToken returns the user of bearer token tok and the
// audiences it is valid for (what TokenReview answers). With audiences,
// the token must be valid for one of them: a ServiceAccount token must
// name one, the other tokens are valid for the ServiceAccount audiences
// (the API server's own) only. Nil audiences mean the API server's.
func (a *Authenticator) AuthenticateToken(ctx context.Context, tok string, audiences []string) (*User, []string, error) {
	var own []string
	if a.ServiceAccounts != nil {
		own = a.ServiceAccounts.Audiences
	}
	if a.ServiceAccounts != nil && looksLikeJWT(tok) {
		if u, auds, err := a.ServiceAccounts.VerifyFor(ctx, tok, audiences); err == nil {
			return u, auds, nil
		}
	}
	if audiences != nil {
		// the other tokens are only for the API server's own audiences
		var both []string
		for _, x := range audiences {
			if slices.Contains(own, x) {
				both = append(both, x)
			}
		}
		if len(both) == 0 {
			return nil, nil, ErrUnauthorized
		}
		own = both
	}
	if a.LoopbackToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(a.LoopbackToken)) == 1 {
		return loopbackUser, own, nil
	}
	if TokenMatches(tok, a.AdminTokenHash) {
		return adminUser, own, nil
	}
	if u, ok := a.Tokens[tok]; ok {
		return u, own, nil
	}
	if a.Bootstrap != nil && IsBootstrapToken(tok) {
		if u, err := a.Bootstrap.Verify(ctx, tok); err == nil {
			return u, own, nil
		}
	}
	return nil, nil, ErrUnauthorized
}

var (
	adminUser    = &User{Name: AdminUser, Groups: []string{GroupMasters, GroupAuthenticated}}
	loopbackUser = &User{Name: LoopbackUser, Groups: []string{GroupMasters, GroupAuthenticated}}
)

// bearer returns the request's bearer token.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

func looksLikeJWT(tok string) bool { return strings.Count(tok, ".") == 2 }

// relayedExtra reads the extras a member relayed (nil: none).
func relayedExtra(h http.Header) map[string][]string {
	var out map[string][]string
	for k, v := range h {
		rest, ok := strings.CutPrefix(k, http.CanonicalHeaderKey(RemoteExtraHeaderPrefix))
		if !ok || rest == "" {
			continue
		}
		key, err := url.PathUnescape(rest)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		out[strings.ToLower(key)] = append(out[strings.ToLower(key)], v...)
	}
	return out
}
