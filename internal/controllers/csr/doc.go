// Package csr holds kube-controller-manager's certificate controllers for
// CertificateSigningRequests:
//
//   - the approver (csrapproving) approves kubelet client certificates
//     (signer kubernetes.io/kube-apiserver-client-kubelet) asked by a
//     bootstrapper or by a node renewing its own, when a SubjectAccessReview
//     says the requester may create certificatesigningrequests/nodeclient
//     or /selfnodeclient (the system:certificates.k8s.io:… roles);
//   - the signer (csrsigning) signs approved requests of the signers
//     kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet
//     and kubelet-serving with the cluster CA, after checking each
//     signer's rules (subject, SANs, usages); a request that breaks them
//     gets a Failed condition.
//
// Both run on the leader only, in the controller manager's term, from the
// term's CSR informer; each has its own work queue and workers and stops
// when the term's context ends (Run returns once its workers have).
//
// Concurrency: no locks of their own; the queues and the informer's cache
// are client-go's, safe for concurrent use, and each request is synced by
// one worker at a time.
package csr
