package controllers

import (
	"strings"

	"github.com/tidwall/gjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ownerRef is what the garbage collector reads of one ownerReference.
type ownerRef struct {
	APIVersion, Kind, Name, UID string
	Block                       bool // blockOwnerDeletion
}

// groupKind is the owner's group and kind (the version does not matter:
// every served version of a kind is stored under one store key).
func (r ownerRef) groupKind() schema.GroupKind {
	group, _, found := strings.Cut(r.APIVersion, "/")
	if !found { // "v1": the core group
		group = ""
	}
	return schema.GroupKind{Group: group, Kind: r.Kind}
}

// objMeta is what the garbage collector reads of an object: only its
// metadata's ownerReferences, deletionTimestamp and finalizers.
type objMeta struct {
	owners []ownerRef
	// deleting: deletionTimestamp is set. foreground and orphan: the
	// object has the foregroundDeletion or the orphan finalizer.
	deleting, foreground, orphan bool
}

// metaPaths are the fields parseMeta reads, in one pass over the object.
var metaPaths = []string{"metadata.ownerReferences", "metadata.deletionTimestamp", "metadata.finalizers"}

// parseMeta reads an object's objMeta from its stored JSON.
func parseMeta(raw []byte) objMeta {
	var m objMeta
	res := gjson.GetManyBytes(raw, metaPaths...)
	res[0].ForEach(func(_, r gjson.Result) bool {
		m.owners = append(m.owners, ownerRef{APIVersion: r.Get("apiVersion").Str, Kind: r.Get("kind").Str,
			Name: r.Get("name").Str, UID: r.Get("uid").Str, Block: r.Get("blockOwnerDeletion").Bool()})
		return true
	})
	m.deleting = res[1].Exists() && res[1].Type != gjson.Null
	res[2].ForEach(func(_, f gjson.Result) bool {
		switch f.Str {
		case metav1.FinalizerDeleteDependents:
			m.foreground = true
		case metav1.FinalizerOrphanDependents:
			m.orphan = true
		}
		return true
	})
	return m
}

// deletingDependents: the object is being deleted in the foreground and
// waits for its blocking dependents.
func (m objMeta) deletingDependents() bool { return m.deleting && m.foreground }

// refTo returns the object's reference to owner uid, if any.
func (m objMeta) refTo(uid string) (ownerRef, bool) {
	for _, r := range m.owners {
		if r.UID == uid {
			return r, true
		}
	}
	return ownerRef{}, false
}
