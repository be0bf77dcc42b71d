package webhook

import (
	"context"
	"net/url"
	"time"

	"github.com/litek8s/litek8s/internal/api/svcclient"
)

// resolveTimeout bounds reading a Service and its EndpointSlices from the
// local store.
const resolveTimeout = 5 * time.Second

// resolver is kube's webhook ServiceResolver over svcclient.Resolve: a
// ready endpoint of the Service's EndpointSlices (kube's own resolver
// answers the Service's DNS name, which a member cannot resolve).
type resolver struct{ rd svcclient.Reader }

func (r resolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	addr, err := svcclient.Resolve(ctx, r.rd, svcclient.ServiceRef{Namespace: namespace, Name: name, Port: port})
	if err != nil {
		return nil, err
	}
	return &url.URL{Scheme: "https", Host: addr}, nil
}
