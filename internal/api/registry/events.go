package registry

import (
	eventsv1 "k8s.io/api/events/v1"
)

// eventsKinds are the served kinds of events.k8s.io/v1.
//
// In kube, core/v1 and events.k8s.io/v1 Events are two views of one
// storage, converted on every read. Here events.k8s.io/v1 Events are a
// resource of their own (store key events.events.k8s.io), served as
// stored: an Event created through one API is not seen through the other.
// Sharing them would mean converting stored objects on every get, list and
// watch, which the read path never does.
func eventsKinds() []*Resource {
	return []*Resource{
		{Group: "events.k8s.io", Version: "v1", Resource: "events", Singular: "event", Kind: "Event",
			Namespaced: true, ShortNames: []string{"ev"},
			New: NewOf[eventsv1.Event](), NewList: NewOf[eventsv1.EventList]()},
	}
}
