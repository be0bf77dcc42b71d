package kit

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// PodNodeIndex is the index of the pod informer by spec.nodeName that
// PodsByNode adds: the pods bound to a node are
// Pods().GetIndexer().ByIndex(PodNodeIndex, node).
const PodNodeIndex = "spec.nodeName"

// PodsByNode returns the term's pod informer with PodNodeIndex, added by
// the first controller that asks (before the informers start).
func (f *Informers) PodsByNode() (cache.SharedIndexInformer, error) {
	inf := f.Pods()
	if _, ok := inf.GetIndexer().GetIndexers()[PodNodeIndex]; ok {
		return inf, nil
	}
	if err := inf.AddIndexers(cache.Indexers{PodNodeIndex: podNode}); err != nil {
		return inf, fmt.Errorf("pod index %s: %w", PodNodeIndex, err) // the informer already started
	}
	return inf, nil
}

func podNode(obj any) ([]string, error) {
	if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}
