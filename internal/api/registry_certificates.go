package api

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// certificatesKinds are the served kinds of certificates.k8s.io/v1:
// CertificateSigningRequests (cluster-scoped, with status and approval
// subresources; who asked is set by csrAdmit), ClusterTrustBundles and
// PodCertificateRequests (which the kubelet lists and watches by
// spec.nodeName).
func certificatesKinds() []*resource {
	const g = "certificates.k8s.io"
	return []*resource{
		{Group: g, Version: "v1", Resource: "certificatesigningrequests", Singular: "certificatesigningrequest",
			Kind: "CertificateSigningRequest", ShortNames: []string{"csr"}, Status: true, Approval: true,
			New: newOf[certificatesv1.CertificateSigningRequest](), NewList: newOf[certificatesv1.CertificateSigningRequestList](),
			Prepare: func(obj runtime.Object) {
				obj.(*certificatesv1.CertificateSigningRequest).Status = certificatesv1.CertificateSigningRequestStatus{}
			},
			Validate: validateCSR},
		{Group: g, Version: "v1", Resource: "clustertrustbundles", Singular: "clustertrustbundle",
			Kind: "ClusterTrustBundle", New: newOf[certificatesv1.ClusterTrustBundle](),
			NewList: newOf[certificatesv1.ClusterTrustBundleList](), Validate: validateClusterTrustBundle},
		{Group: g, Version: "v1", Resource: "podcertificaterequests", Singular: "podcertificaterequest",
			Kind: "PodCertificateRequest", Namespaced: true, Status: true,
			New: newOf[certificatesv1.PodCertificateRequest](), NewList: newOf[certificatesv1.PodCertificateRequestList](),
			Prepare: func(obj runtime.Object) {
				obj.(*certificatesv1.PodCertificateRequest).Status = certificatesv1.PodCertificateRequestStatus{}
			},
			Validate: validatePodCertificateRequest},
	}
}

// statusLike reports whether subresource sub changes status only (status,
// and a CSR's approval).
func statusLike(sub string) bool { return sub == "status" || sub == "approval" }
