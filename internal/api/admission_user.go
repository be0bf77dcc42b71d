package api

import (
	"context"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/auth"
)

// Admission that depends on who writes (kube's admission plugins that
// read the request's user): a CSR records its requester and may be
// approved or signed only by those the signer allows
// (CertificateApproval, CertificateSigning,
// CertificateSubjectRestriction); nodes write only what is theirs
// (NodeRestriction, noderestriction.go); RBAC objects grant only what
// their writer holds (admission_rbac.go).

// writeAttrs is one write for user admission: old is nil on create.
type writeAttrs struct {
	user     *auth.User
	q        *request
	obj, old runtime.Object
}

// admitWriter runs the user admission plugins on a create (old nil) or
// update of q. It may change obj.
func (s *Server) admitWriter(ctx context.Context, q *request, obj, old runtime.Object) error {
	a := &writeAttrs{user: auth.UserFrom(ctx), q: q, obj: obj, old: old}
	if a.user == nil {
		return nil // the server's own writes
	}
	for _, admit := range []func(context.Context, *writeAttrs) error{s.csrAdmit, s.nodeRestriction, s.rbacEscalation} {
		if err := admit(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// csrAdmit prepares a CSR write as kube's strategies do and checks who
// may approve and sign it.
func (s *Server) csrAdmit(ctx context.Context, a *writeAttrs) error {
	csr, ok := a.obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil
	}
	old, _ := a.old.(*certificatesv1.CertificateSigningRequest)
	now := metav1.NewTime(s.cfg.Now().UTC().Truncate(time.Second))
	if old == nil {
		csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups = a.user.Name, a.user.UID, a.user.Groups
		csr.Spec.Extra = nil
		for k, v := range a.user.Extra {
			if csr.Spec.Extra == nil {
				csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
			}
			csr.Spec.Extra[k] = v
		}
		return s.csrSubjectRestriction(a.q, csr)
	}
	csr.Spec = old.Spec // the spec never changes
	switch a.q.subresource {
	case "":
		csr.Status = old.Status
	case "status":
		keepApproval(csr, old)
		if string(csr.Status.Certificate) != string(old.Status.Certificate) {
			if err := s.signerAllows(ctx, a, "sign", csr.Spec.SignerName); err != nil {
				return err
			}
		}
	case "approval":
		csr.Status.Certificate = old.Status.Certificate
		if approvalChanged(csr, old) {
			if err := s.signerAllows(ctx, a, "approve", csr.Spec.SignerName); err != nil {
				return err
			}
		}
	}
	stampConditions(csr, old, now)
	return nil
}

// keepApproval: a status update keeps the Approved and Denied conditions
// as they are (the approval subresource changes them). Like kube's
// preserveConditionInstances, when the update has as many of a type as
// the stored object, the stored ones are put back in its places, so the
// order the client sent stays; otherwise the update's are dropped and the
// stored ones appended.
func keepApproval(csr, old *certificatesv1.CertificateSigningRequest) {
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		at, was := conditionIndices(csr, t), conditionIndices(old, t)
		if len(at) == len(was) {
			for i, j := range at {
				csr.Status.Conditions[j] = old.Status.Conditions[was[i]]
			}
			continue
		}
		kept := csr.Status.Conditions[:0:0]
		for _, c := range csr.Status.Conditions {
			if c.Type != t {
				kept = append(kept, c)
			}
		}
		for _, j := range was {
			kept = append(kept, old.Status.Conditions[j])
		}
		csr.Status.Conditions = kept
	}
}

// conditionIndices returns where csr's conditions of type t are.
func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// approvalChanged reports whether the Approved or Denied conditions differ.
func approvalChanged(csr, old *certificatesv1.CertificateSigningRequest) bool {
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		a, b := registry.CSRConditions(csr, t), registry.CSRConditions(old, t)
		if len(a) != len(b) {
			return true
		}
		for i := range a {
			if a[i].Status != b[i].Status || a[i].Reason != b[i].Reason || a[i].Message != b[i].Message {
				return true
			}
		}
	}
	return false
}

// stampConditions sets the times of new or changed conditions (kube's
// populateConditionTimestamps).
func stampConditions(csr, old *certificatesv1.CertificateSigningRequest, now metav1.Time) {
	prev := map[certificatesv1.RequestConditionType]certificatesv1.CertificateSigningRequestCondition{}
	for _, c := range old.Status.Conditions {
		prev[c.Type] = c
	}
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		p, had := prev[c.Type]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if c.LastTransitionTime.IsZero() {
			if had && p.Status == c.Status && !p.LastTransitionTime.IsZero() {
				c.LastTransitionTime = p.LastTransitionTime
			} else {
				c.LastTransitionTime = now
			}
		}
	}
}

// signerAllows checks that the writer may verb ("approve", "sign") the
// requests of signer: RBAC on certificates.k8s.io signers named signer
// or <domain>/* (kube's CertificateApproval and CertificateSigning).
func (s *Server) signerAllows(ctx context.Context, a *writeAttrs, verb, signer string) error {
	names := []string{signer}
	if domain, _, ok := strings.Cut(signer, "/"); ok {
		names = append(names, domain+"/*")
	}
	for _, n := range names {
		d, err := s.authz.Authorize(ctx, auth.Attributes{User: a.user, Verb: verb, ResourceRequest: true,
			APIGroup: "certificates.k8s.io", Resource: "signers", Name: n})
		if err != nil {
			return err
		}
		if d.Allowed {
			return nil
		}
	}
	return apierrors.NewForbidden(a.q.res.GroupResource(), a.q.name,
		fmt.Errorf("user not permitted to %s requests with signerName %q", verb, signer))
}

// csrSubjectRestriction refuses kube-apiserver-client CSRs for
// system:masters (kube's CertificateSubjectRestriction).
func (s *Server) csrSubjectRestriction(q *request, csr *certificatesv1.CertificateSigningRequest) error {
	if csr.Spec.SignerName != auth.SignerKubeAPIServerClient {
		return nil
	}
	req, err := registry.ParseCSR(csr.Spec.Request)
	if err != nil {
		return nil // validation answers it
	}
	for _, o := range req.Subject.Organization {
		if o == auth.GroupMasters {
			return apierrors.NewForbidden(q.res.GroupResource(), csr.Name,
				fmt.Errorf("use of %s signer with %s group is not allowed", auth.SignerKubeAPIServerClient, auth.GroupMasters))
		}
	}
	return nil
}
