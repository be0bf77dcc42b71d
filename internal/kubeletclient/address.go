package kubeletclient

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// NodeURL is the base URL of node's kubelet: https, the first address of
// the preferred types (kube's nodeutil.GetPreferredNodeAddress), the port
// the node reports or DefaultPort.
func (c *Client) NodeURL(node *corev1.Node) (*url.URL, error) {
	host, err := preferredAddress(node, c.cfg.PreferredAddressTypes)
	if err != nil {
		return nil, err
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = c.cfg.DefaultPort
	}
	return &url.URL{Scheme: "https", Host: net.JoinHostPort(host, strconv.Itoa(port))}, nil
}

// preferredAddress is the node's first address of the first preferred
// type that it has (kube's nodeutil.GetPreferredNodeAddress).
func preferredAddress(node *corev1.Node, types []corev1.NodeAddressType) (string, error) {
	for _, t := range types {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return a.Address, nil
			}
		}
	}
	return "", fmt.Errorf("%w: node %q (preferred: %v)", ErrNoAddress, node.Name, types)
}
