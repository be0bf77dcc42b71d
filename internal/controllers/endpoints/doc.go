// Package endpoints maintains the endpoints of Services with a selector:
// kube's "endpoint-controller" (core/v1 Endpoints, New) and
// "endpointslice-controller" (discovery.k8s.io/v1 EndpointSlices,
// NewSlices), two controllers that share the same view of which pods back
// which service (pods.go).
//
//   - A pod backs a service when it is in the service's namespace, matches
//     its selector, has a pod IP and has not finished (Succeeded/Failed).
//     Its ports are the service's ports with targetPort resolved on the
//     pod (a named targetPort is looked up among the pod's container
//     ports; a pod without it does not serve that port).
//   - Endpoints (same name as the service) list Ready pods in addresses
//     and the others in notReadyAddresses, grouped into subsets by port
//     set; terminating pods are left out (unless the service publishes
//     not-ready addresses). Labels are the service's plus
//     endpoints.kubernetes.io/managed-by. They are deleted with the
//     service.
//   - EndpointSlices (generateName "<service>-", addressType IPv4, owned
//     by the service, labelled kubernetes.io/service-name and
//     endpointslice.kubernetes.io/managed-by) hold one endpoint per pod
//     with conditions ready/serving/terminating, nodeName, hostname and
//     targetRef; one slice per port set, split every
//     Config.MaxEndpointsPerSlice endpoints; a service with no endpoint
//     keeps one empty slice, as kube's controller does. Slices the
//     controller does not need any more are deleted.
//
// The slice controller remembers the slices it wrote until its informer
// has seen them (tracker.go): a service is not synced against a cache
// that does not hold its own last writes yet, which would create a
// second slice for the same endpoints; the informer's event for the
// write queues the service again.
//
// Concurrency: each controller's Run owns its workers and queue (keys
// "namespace/name" of services) and returns when all have stopped; a
// service is synced by one worker of a controller at a time.
package endpoints
