package workloadtest

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Event is one recorded watch event.
type Event struct {
	RV     int64
	Type   watch.EventType
	Object runtime.Object
}

// Recorder records the events of watches, in resourceVersion order (the
// Raft index: one order for every resource).
type Recorder struct {
	mu     sync.Mutex // guards events
	events []Event
	ws     []watch.Interface
	wg     sync.WaitGroup
}

// Record starts recording; list returns the current resourceVersion of a
// resource, watch opens a watch from it. The recorder stops on t.Cleanup.
func Record(t *testing.T, watches ...func(opts metav1.ListOptions) (watch.Interface, error)) *Recorder {
	t.Helper()
	r := &Recorder{}
	t.Cleanup(r.stop)
	for _, w := range watches {
		wi, err := w(metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			t.Fatal(err)
		}
		r.ws = append(r.ws, wi)
		r.wg.Go(func() {
			for ev := range wi.ResultChan() {
				acc, err := meta.Accessor(ev.Object)
				if err != nil {
					continue
				}
				var rv int64
				fmt.Sscan(acc.GetResourceVersion(), &rv)
				r.mu.Lock()
				r.events = append(r.events, Event{RV: rv, Type: ev.Type, Object: ev.Object})
				r.mu.Unlock()
			}
		})
	}
	return r
}

func (r *Recorder) stop() {
	for _, w := range r.ws {
		w.Stop()
	}
	r.wg.Wait()
}

// Events returns the events so far in revision order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	out := slices.Clone(r.events)
	r.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].RV < out[j].RV })
	return out
}
