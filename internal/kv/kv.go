package kv

import (
	"strconv"
	"time"
)

// Key names one object. Resource is the group-qualified plural
// ("configmaps", "deployments.apps", "leases.coordination.k8s.io");
// Namespace is empty for cluster-scoped resources.
type Key struct {
	Resource  string
	Namespace string
	Name      string
}

// String renders the key as "resource/namespace/name" (for logs and errors).
func (k Key) String() string { return k.Resource + "/" + k.Namespace + "/" + k.Name }

// Less orders keys within one resource the way etcd orders kube's keys:
// by namespace, then by name.
func (k Key) Less(o Key) bool {
	if k.Resource != o.Resource {
		return k.Resource < o.Resource
	}
	if k.Namespace != o.Namespace {
		return k.Namespace < o.Namespace
	}
	return k.Name < o.Name
}

// Cell is one precomputed Table cell. JSON holds the encoded value. When JSON
// is nil the cell depends on the clock and is rendered at request time as the
// human duration since Since (or "<unknown>" when Since is zero). When JSON
// is a string and Since is set, " (<duration> ago)" is appended inside the
// string at request time (a pod's "5 (3m ago)" restarts). An object keeps
// its cells packed in a Row; render them with table.AppendCells.
type Cell struct {
	JSON  []byte
	Since time.Time
}

// Derived is what serving needs from an object, computed once when the
// object is applied so that get, list, watch and Tables never parse it.
type Derived struct {
	// Labels of the object, packed (see Labels).
	Labels Labels
	// Fields holds the values of the field selectors the resource supports
	// (for example "spec.nodeName"); metadata.name and metadata.namespace are
	// always available from the Key.
	Fields map[string]string
	// MetaStart and MetaEnd delimit the raw JSON value of "metadata" in Raw.
	// (Offsets are int32: an object is far below 2 GiB, and with Stale
	// they fill 16 bytes: 16 bytes less per stored object than ints.)
	MetaStart, MetaEnd int32
	// BodyStart is the offset in Raw just after `{"kind":…,"apiVersion":…,`,
	// so that raw[BodyStart:] prefixed with '{' is the list item form (list
	// items of built-in kinds carry no kind/apiVersion). Zero when Raw does
	// not start that way.
	BodyStart int32
	// Stale is set when the stored form of Raw was not written with the
	// store's current encryption key (an older key, or unencrypted): an
	// update must then be written even if it changes nothing. (Not derived
	// from Raw: it sits here to share the offsets' word.)
	Stale bool
	// Cells are the Table cells of the object, in column order, packed in
	// one exactly sized Row.
	Cells Row
}

// Object is one stored object. It is immutable: a write replaces it.
type Object struct {
	Key Key
	// Raw is the stored JSON, exactly as served, resourceVersion included.
	Raw []byte
	// RV is the revision (Raft log index) of the write that produced Raw.
	RV uint64
	// UID is metadata.uid.
	UID string
	Derived
}

// Op is the operation of a write.
type Op uint8

// Operations of a write.
const (
	OpCreate Op = 1 // the key must not exist
	OpUpdate Op = 2 // the key must exist
	OpDelete Op = 3 // the key must exist
)

// String names the operation.
func (o Op) String() string {
	switch o {
	case OpCreate:
		return "create"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Write is one proposed change. Preconditions are checked by the store when
// it applies the write, in log order, identically on every member.
type Write struct {
	Op  Op
	Key Key
	// ExpectedRV, when non-zero, must equal the current object's RV.
	ExpectedRV uint64
	// ExpectedUID, when non-empty, must equal the current object's uid.
	ExpectedUID string
	// Object is the raw JSON of the new object (empty for a delete). Its
	// metadata.resourceVersion is replaced by the store.
	Object []byte
}

// EventType is the type of a watch event.
type EventType uint8

// Watch event types.
const (
	Added EventType = iota + 1
	Modified
	Deleted
)

// String returns the name used on the wire ("ADDED", …).
func (t EventType) String() string {
	switch t {
	case Added:
		return "ADDED"
	case Modified:
		return "MODIFIED"
	case Deleted:
		return "DELETED"
	}
	return "UNKNOWN"
}

// Event is one change in the change feed. Object is the new state (for
// Deleted: the last state, with the RV of the delete); Prev is the state
// before the change (nil for Added).
type Event struct {
	Type   EventType
	Object *Object
	Prev   *Object
}

// List is an immutable, consistent view of one resource (in one namespace,
// or all) at revision Rev; it may be read while the store keeps changing.
type List struct {
	Rev uint64
	// ModRev is the revision of the last change to the resource (in any
	// namespace) at or before Rev: a page taken at revision r continues
	// consistently from this view when ModRev <= r.
	ModRev uint64
	// Source holds the objects (nil for an empty resource); Namespace is
	// the list's namespace in it ("" for all).
	Source    ListSource
	Namespace string
}

// ListSource is the store's immutable view behind a List.
type ListSource interface {
	// Each calls fn for each object of namespace (all when "") in key
	// order, starting after the object named after (within the
	// namespace; "namespace/name" across namespaces) when after is
	// non-empty, until fn returns false.
	Each(namespace, after string, fn func(*Object) bool)
	// Count returns the number of objects in namespace (all when "").
	Count(namespace string) int
}

// Range calls fn for each object of the list in key order, starting after
// the object named after, until fn returns false.
func (l *List) Range(after string, fn func(*Object) bool) {
	if l.Source != nil {
		l.Source.Each(l.Namespace, after, fn)
	}
}

// Len returns the number of objects in the list.
func (l *List) Len() int {
	if l.Source == nil {
		return 0
	}
	return l.Source.Count(l.Namespace)
}

// Watcher delivers the events of one watch: wait on Ready, then Take what
// waits. Events queue only as far as the watcher is behind, so an idle
// watch holds no buffer. Once the watch ends and its last events are
// taken, Take says so; Err then says why (nil after Stop, ErrExpired when
// the watcher fell behind or the store was restored, ErrClosed on
// shutdown).
type Watcher interface {
	// Ready receives a value when events may wait to be taken (Take may
	// then find none: they were taken already), and is closed when the
	// watch ends. Take after every receive: a new signal comes only once
	// the waiting events were taken.
	Ready() <-chan struct{}
	// Take appends the waiting events to buf, oldest first, and returns
	// it, and false once the watch has ended (the events returned with
	// false are its last).
	Take(buf []Event) ([]Event, bool)
	Err() error
	Stop()
}
