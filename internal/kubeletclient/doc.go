// Package kubeletclient reaches the nodes' kubelets and other backends for
// the API's connect subresources (pods/log, exec, attach, portforward and
// the nodes, pods and services proxies), as kube-apiserver's kubelet
// client and upgrade-aware proxy do:
//
//   - client.go: the TLS client of the kubelets (a client certificate of
//     the cluster CA; the kubelet's serving certificate is verified when
//     the cluster CA signed it, else accepted, as kube-apiserver does
//     without --kubelet-certificate-authority);
//   - address.go: where a Node's kubelet listens (status.addresses by
//     preferred type, status.daemonEndpoints.kubeletEndpoint.Port);
//   - location.go: the kubelet's paths for logs, exec, attach and
//     port-forward, built from the parsed options as kube builds them;
//   - proxy.go: one reverse proxy for all of them that streams (flushes
//     as bytes arrive) and switches protocols (SPDY/3.1, WebSocket),
//     copying both ways until either side closes.
//
// Concurrency: a Client is immutable after New and safe for concurrent
// use; Proxy starts no goroutine that outlives the request it serves
// (net/http/httputil's upgrade copy ends when either connection closes).
package kubeletclient
