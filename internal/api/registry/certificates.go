package registry

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// certificatesKinds are the served kinds of certificates.k8s.io/v1:
// CertificateSigningRequests (cluster-scoped, with status and approval
// subresources; who asked is set by csrAdmit), ClusterTrustBundles and
// PodCertificateRequests (which the kubelet lists and watches by
// spec.nodeName).
func certificatesKinds() []*Resource {
	const g = "certificates.k8s.io"
	return []*Resource{
		{Group: g, Version: "v1", Resource: "certificatesigningrequests", Singular: "certificatesigningrequest",
			Kind: "CertificateSigningRequest", ShortNames: []string{"csr"}, Status: true, Approval: true,
			New: NewOf[certificatesv1.CertificateSigningRequest](), NewList: NewOf[certificatesv1.CertificateSigningRequestList](),
			Prepare: func(obj runtime.Object) {
				obj.(*certificatesv1.CertificateSigningRequest).Status = certificatesv1.CertificateSigningRequestStatus{}
			},
			Validate: validateCSR},
		{Group: g, Version: "v1", Resource: "clustertrustbundles", Singular: "clustertrustbundle",
			Kind: "ClusterTrustBundle", New: NewOf[certificatesv1.ClusterTrustBundle](),
			NewList: NewOf[certificatesv1.ClusterTrustBundleList](), Validate: validateClusterTrustBundle},
		{Group: g, Version: "v1", Resource: "podcertificaterequests", Singular: "podcertificaterequest",
			Kind: "PodCertificateRequest", Namespaced: true, Status: true,
			New: NewOf[certificatesv1.PodCertificateRequest](), NewList: NewOf[certificatesv1.PodCertificateRequestList](),
			Prepare: func(obj runtime.Object) {
				obj.(*certificatesv1.PodCertificateRequest).Status = certificatesv1.PodCertificateRequestStatus{}
			},
			Validate: validatePodCertificateRequest},
	}
}
