package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// serviceaccounts/token (TokenRequest, what `kubectl create token` and
// the kubelet ask): a signed token bound to the ServiceAccount's UID.

const (
	defaultTokenSeconds = 3600
	minTokenSeconds     = 600     // kube: "may not specify a duration less than 10 minutes"
	maxTokenSeconds     = 1 << 32 // kube: "… larger than 2^32 seconds"
)

// tokenRequestKind is what a TokenRequest body decodes as.
var tokenRequestKind = &registry.Resource{Group: "authentication.k8s.io", Version: "v1", Resource: "tokenrequests",
	Kind: "TokenRequest", New: registry.NewOf[authenticationv1.TokenRequest]()}

// serviceAccountUID returns the UID of ServiceAccount ns/name as this
// member has it.
func (s *Server) serviceAccountUID(ctx context.Context, ns, name string) (string, error) {
	obj, _, err := s.store.Get(ctx, kv.Key{Resource: "serviceaccounts", Namespace: ns, Name: name}, false)
	if err != nil {
		return "", err
	}
	var m struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(obj.Raw, &m); err != nil {
		return "", err
	}
	return m.Metadata.UID, nil
}

// requestToken answers POST …/serviceaccounts/{name}/token.
func (s *Server) requestToken(w http.ResponseWriter, r *http.Request, q *request) error {
	sa := s.cfg.ServiceAccounts
	if sa == nil {
		return errNotFoundResource
	}
	fv, err := parseFieldValidation(r)
	if err != nil {
		return err
	}
	ws := &warnings{}
	obj, err := s.decodeBody(r, tokenRequestKind, fv, ws) // kubectl sends protobuf
	if err != nil {
		return err
	}
	ws.write(w)
	tr := obj.(*authenticationv1.TokenRequest)
	secs := int64(defaultTokenSeconds)
	if tr.Spec.ExpirationSeconds != nil {
		secs = *tr.Spec.ExpirationSeconds
	}
	gk := schema.GroupKind{Group: "authentication.k8s.io", Kind: "TokenRequest"}
	path := field.NewPath("spec", "expirationSeconds")
	switch {
	case secs < minTokenSeconds:
		return apierrors.NewInvalid(gk, q.name, field.ErrorList{field.Invalid(path, secs, "may not specify a duration less than 10 minutes")})
	case secs > maxTokenSeconds:
		return apierrors.NewInvalid(gk, q.name, field.ErrorList{field.Invalid(path, secs, "may not specify a duration larger than 2^32 seconds")})
	}
	uid, err := s.serviceAccountUID(r.Context(), q.namespace, q.name)
	if err != nil {
		return storeErr(err, q.res, q.name)
	}
	if err := s.nodeTokenRestriction(r.Context(), q, tr); err != nil {
		return err
	}
	tok, exp, err := sa.Issue(q.namespace, q.name, uid, tr.Spec.Audiences, time.Duration(secs)*time.Second)
	if err != nil {
		return fmt.Errorf("api: sign a token: %w", err)
	}
	out := authenticationv1.TokenRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: "TokenRequest"},
		ObjectMeta: metav1.ObjectMeta{Name: q.name, Namespace: q.namespace, CreationTimestamp: metav1.NewTime(s.cfg.Now())},
		Spec: authenticationv1.TokenRequestSpec{Audiences: tr.Spec.Audiences, ExpirationSeconds: &secs,
			BoundObjectRef: tr.Spec.BoundObjectRef},
		Status: authenticationv1.TokenRequestStatus{Token: tok, ExpirationTimestamp: metav1.NewTime(exp)},
	}
	if len(out.Spec.Audiences) == 0 {
		out.Spec.Audiences = sa.Audiences
	}
	raw, err := json.Marshal(&out)
	if err != nil {
		return err
	}
	writeRaw(w, http.StatusCreated, raw)
	return nil
}
