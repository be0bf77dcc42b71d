package csr

import (
	"context"
	"log/slog"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certlisters "k8s.io/client-go/listers/certificates/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/litek8s/litek8s/internal/controllers/kit"
)

// ApproverName is kube's name for the approver (its client's User-Agent
// suffix and --controllers name).
const ApproverName = "csrapproving"

// approver approves kubelet client CSRs whose requester RBAC allows.
type approver struct {
	client kubernetes.Interface
	csrs   certlisters.CertificateSigningRequestLister
	log    *slog.Logger
	loop   *kit.Loop
}

// NewApprover returns the approver of the term of kc.
func NewApprover(kc *kit.Context, cfg Config) kit.Controller {
	inf := kc.Informers.CertificateSigningRequests()
	a := &approver{client: kc.Client(ApproverName), csrs: certlisters.NewCertificateSigningRequestLister(inf.GetIndexer()),
		log: kc.Log.With("controller", ApproverName)}
	a.loop = kit.NewLoop(kc, ApproverName, cfg.LoopConfig, a.sync)
	inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: a.loop.Enqueue,
		UpdateFunc: func(_, obj any) { a.loop.Enqueue(obj) }})
	return a
}

func (a *approver) Name() string { return ApproverName }

// Run works until ctx ends and returns once the workers have stopped.
func (a *approver) Run(ctx context.Context) { a.loop.Run(ctx) }

// sync approves CSR name if it is a kubelet client request its requester
// may make: a node renewing its own (selfnodeclient) or anyone allowed
// nodeclient (bootstrappers).
func (a *approver) sync(ctx context.Context, name string) error {
	csr, err := a.csrs.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if csr.Spec.SignerName != signerKubeletClient || len(csr.Status.Certificate) > 0 ||
		condition(csr, certificatesv1.CertificateApproved) || condition(csr, certificatesv1.CertificateDenied) {
		return nil
	}
	req, err := parseRequest(csr)
	if err != nil {
		return nil // not ours to judge: the signer fails it
	}
	if kubeletClientError(req, csr.Spec.Usages) != "" {
		return nil
	}
	checks := []struct{ sub, message string }{
		{"nodeclient", "Auto approving kubelet client certificate after SubjectAccessReview."},
	}
	if csr.Spec.Username == req.Subject.CommonName {
		checks = append([]struct{ sub, message string }{
			{"selfnodeclient", "Auto approving self kubelet client certificate after SubjectAccessReview."}}, checks...)
	}
	for _, c := range checks {
		ok, err := a.allowed(ctx, csr, c.sub)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		csr = csr.DeepCopy()
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "AutoApproved", Message: c.message})
		_, err = a.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
		if err == nil {
			a.log.Info("approved", "csr", name, "requester", csr.Spec.Username, "as", c.sub)
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	return nil
}

// allowed asks whether the CSR's requester may create
// certificatesigningrequests/<sub>.
func (a *approver) allowed(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, sub string) (bool, error) {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "certificates.k8s.io",
			Resource: "certificatesigningrequests", Subresource: sub, Verb: "create"}}}
	out, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return out.Status.Allowed, nil
}
