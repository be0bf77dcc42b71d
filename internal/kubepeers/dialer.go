package kubepeers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ErrNoPodIP is returned for a peer whose Pod does not exist or has no IP
// yet: the caller retries, as it would a refused connection.
var ErrNoPodIP = errors.New("kubepeers: the peer's Pod has no IP yet")

// Dialer opens connections to peers named <pod>.<Domain>.
type Dialer struct {
	// Client reaches the Kubernetes API the Pods live in.
	Client kubernetes.Interface
	// Namespace of the StatefulSet's Pods.
	Namespace string
	// Domain is the headless Service's domain, e.g.
	// "litek8s-peers.litek8s.svc.cluster.local".
	Domain string
	// Net dials the address found (and names outside Domain).
	Net    *net.Dialer
	Logger *slog.Logger

	dnsFallback atomic.Bool // the API refused us once: logged, use DNS from then on
}

// PodOf returns the Pod name of host when host is <pod>.<Domain>.
func (d *Dialer) PodOf(host string) (string, bool) {
	host = strings.TrimSuffix(host, ".")
	pod, ok := strings.CutSuffix(host, "."+strings.TrimSuffix(d.Domain, "."))
	if !ok || pod == "" || strings.Contains(pod, ".") {
		return "", false
	}
	return pod, true
}

// DialContext dials address, resolving a peer's name through its Pod.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	pod, ok := d.PodOf(host)
	if !ok || d.dnsFallback.Load() {
		return d.Net.DialContext(ctx, network, address)
	}
	p, err := d.Client.CoreV1().Pods(d.Namespace).Get(ctx, pod, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%w: pod %s/%s does not exist", ErrNoPodIP, d.Namespace, pod)
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		if !d.dnsFallback.Swap(true) {
			d.Logger.Warn("cannot read peers' Pods: resolving their names through DNS from now on", "err", err)
		}
		return d.Net.DialContext(ctx, network, address)
	case err != nil:
		return nil, fmt.Errorf("kubepeers: pod %s/%s: %w", d.Namespace, pod, err)
	case p.Status.PodIP == "":
		return nil, fmt.Errorf("%w: pod %s/%s", ErrNoPodIP, d.Namespace, pod)
	}
	return d.Net.DialContext(ctx, network, net.JoinHostPort(p.Status.PodIP, port))
}
