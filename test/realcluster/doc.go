// Package realcluster is a real one-machine Kubernetes v1.37.2 for tests:
// containerd, etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kubelet, kube-proxy (iptables), CoreDNS and a default
// StorageClass with dynamic local volumes, started on this host by up.sh
// and removed, with everything it changed, by down.sh (see README.md).
//
// Up brings the cluster up for a test (or reuses one that is already up)
// and registers its teardown; UpLitek8s does the same with three litek8s
// members serving the API in place of etcd and the kube control plane;
// LoadImage imports an image archive into the cluster's containerd. The
// binaries are built by build.sh into a cache
// outside the repository; Up skips when they are not there unless
// CI=true, in which case it builds them (~25 minutes cold).
//
// Concurrency: there is one cluster per machine (fixed interface names,
// CIDRs and node IP). Up takes an exclusive lock, held until the test's
// cleanup, so test binaries that call Up run one after another; methods of
// a Cluster are safe for concurrent use.
package realcluster
