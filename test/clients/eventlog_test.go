package clients

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// eventLog is an informer event handler that keeps what a controller
// would see: every notification in order, and the state they add up to.
type eventLog struct {
	mu     sync.Mutex // protects events and state
	events []notification
	state  map[string]runtime.Object // namespace/name → last object seen
	errs   []string                  // contract violations seen by the handler
}

type notification struct {
	Type    string // ADD, UPDATE, DELETE
	Key     string
	RV      string // the new object's resourceVersion (the last known one on DELETE)
	Initial bool   // ADD from the initial list
	Unknown bool   // DELETE of a DeletedFinalStateUnknown (found missing on relist)
}

func (n notification) String() string {
	return fmt.Sprintf("%s %s@%s", n.Type, n.Key, n.RV)
}

func newEventLog() *eventLog { return &eventLog{state: make(map[string]runtime.Object)} }

func (l *eventLog) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			o := obj.(runtime.Object)
			l.record(notification{Type: "ADD", Key: key(o), RV: rv(o), Initial: initial}, o)
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, n := oldObj.(runtime.Object), newObj.(runtime.Object)
			l.mu.Lock()
			if key(o) != key(n) {
				l.errs = append(l.errs, fmt.Sprintf("update of %s carries %s", key(o), key(n)))
			}
			if prev, ok := l.state[key(o)]; !ok || rv(prev) != rv(o) {
				l.errs = append(l.errs, fmt.Sprintf("update of %s: old object @%s, handler last saw %v", key(o), rv(o), prev != nil))
			}
			l.mu.Unlock()
			l.record(notification{Type: "UPDATE", Key: key(n), RV: rv(n)}, n)
		},
		DeleteFunc: func(obj any) {
			n := notification{Type: "DELETE"}
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				n.Unknown, obj = true, d.Obj
			}
			o := obj.(runtime.Object)
			n.Key, n.RV = key(o), rv(o)
			l.record(n, nil)
		},
	}
}

func (l *eventLog) record(n notification, obj runtime.Object) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, n)
	switch n.Type {
	case "ADD":
		if _, ok := l.state[n.Key]; ok {
			l.errs = append(l.errs, "ADD of "+n.Key+" which the handler already has")
		}
		l.state[n.Key] = obj
	case "UPDATE":
		l.state[n.Key] = obj
	case "DELETE":
		if _, ok := l.state[n.Key]; !ok {
			l.errs = append(l.errs, "DELETE of "+n.Key+" which the handler does not have")
		}
		delete(l.state, n.Key)
	}
}

// snapshot returns the handler's state as sorted "namespace/name@rv" lines.
func (l *eventLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.state))
	for k, o := range l.state {
		out = append(out, k+"@"+rv(o))
	}
	sort.Strings(out)
	return out
}

func (l *eventLog) get(k string) runtime.Object {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state[k]
}

// since returns the notifications recorded from index i on, and the next index.
func (l *eventLog) since(i int) ([]notification, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]notification(nil), l.events[i:]...), len(l.events)
}

func (l *eventLog) violations() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.errs, "\n")
}

func key(o runtime.Object) string {
	m, err := meta.Accessor(o)
	if err != nil {
		return fmt.Sprintf("<%T>", o)
	}
	return m.GetNamespace() + "/" + m.GetName()
}

func rv(o runtime.Object) string {
	m, err := meta.Accessor(o)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}
