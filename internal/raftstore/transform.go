package raftstore

import (
	"bytes"
	"fmt"

	"github.com/litek8s/litek8s/internal/kv"
)

// Transformer turns an object's bytes into the form that enters the Raft
// log, snapshots and backups (encrypted at rest: internal/encryption) and
// back. Memory holds the plain form, so reads, lists and watches cost
// nothing more. Every member must be given the same transformation: one
// that cannot read an entry stops (see mustFromStorage).
type Transformer interface {
	// ToStorage returns the stored form of plain, the object at k (plain
	// itself when k's resource is not transformed).
	ToStorage(k kv.Key, plain []byte) ([]byte, error)
	// FromStorage returns the plain form of stored; stale reports that a
	// rewrite would store it differently (an older key).
	FromStorage(k kv.Key, stored []byte) (plain []byte, stale bool, err error)
}

// encPrefix starts kube's encrypted data (k8s:enc:<provider>:v1:<key>:).
// Objects are JSON: a member without a Transformer that meets it stops
// rather than store ciphertext as an object.
var encPrefix = []byte("k8s:enc:")

// transformed reports whether k's objects go through a Transformer: the
// store's own records (members) never do.
func transformed(k kv.Key) bool { return k.Resource == "" || k.Resource[0] != '_' }

// toStorage returns the stored form of obj's bytes.
func toStorage(tr Transformer, k kv.Key, raw []byte) ([]byte, error) {
	if tr == nil || len(raw) == 0 || !transformed(k) {
		return raw, nil
	}
	return tr.ToStorage(k, raw)
}

// fromStorage returns the plain form of the stored bytes of the object at
// k, and whether they are stale.
func fromStorage(tr Transformer, k kv.Key, stored []byte) ([]byte, bool, error) {
	if len(stored) == 0 || !transformed(k) {
		return stored, false, nil
	}
	if tr == nil {
		if bytes.HasPrefix(stored, encPrefix) {
			return nil, false, fmt.Errorf("%s is stored encrypted but this member has no encryption configuration "+
				"(every member needs the same --encryption-provider-config)", k)
		}
		return stored, false, nil
	}
	plain, stale, err := tr.FromStorage(k, stored)
	if err != nil {
		return nil, false, fmt.Errorf("%w (every member needs the same --encryption-provider-config)", err)
	}
	return plain, stale, nil
}
