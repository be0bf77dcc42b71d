// Package install installs litek8s the way users do, on a real
// Kubernetes (test/realcluster: kube-apiserver, a kubelet with containerd,
// kube-proxy and CoreDNS on this machine): the image hack/image.sh builds,
// imported into containerd, and `helm install charts/litek8s`. Then, under
// a continuous write load whose acknowledged writes are checked at the end
// (test/fault's history checker), it deletes the leader's Pod, force-deletes
// a follower's, upgrades to a new image tag, scales to 5 members and back
// to 3, and uninstalls; a Prometheus on the host discovers and scrapes the
// member Pods.
//
// It needs root (containerd, kubelet, iptables). Without CI=true it skips
// where test/realcluster does; with CI=true a missing prerequisite fails.
package install
