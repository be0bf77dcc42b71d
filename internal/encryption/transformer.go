package encryption

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/litek8s/litek8s/internal/kv"
)

// Transformer encrypts and decrypts the stored bytes of the resources a
// Configuration lists. Build it with New or LoadFile.
type Transformer struct {
	// byResource maps a resource as the store names it ("secrets",
	// "deployments.apps") or a wildcard ("*.", "*.apps", "*.*") to its keys.
	byResource map[string]*chain
}

// chain is the keys of one resource, in order: the first encrypts.
type chain struct {
	keys []cipherKey
}

// New builds the Transformer of a validated configuration.
func New(c *Configuration) (*Transformer, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t := &Transformer{byResource: map[string]*chain{}}
	for _, rc := range c.Resources {
		var keys []cipherKey
		for _, p := range rc.Providers {
			ks, err := providerKeys(p)
			if err != nil {
				return nil, err
			}
			keys = append(keys, ks...)
		}
		for _, res := range rc.Resources {
			name := resourceName(schema.ParseGroupResource(res))
			ch := t.byResource[name]
			if ch == nil {
				ch = &chain{}
				t.byResource[name] = ch
			}
			ch.keys = append(ch.keys, keys...) // kube joins the providers of every rule naming it
		}
	}
	return t, nil
}

// resourceName is the store's name of gr: "secrets", "deployments.apps",
// "*." for every core resource, "*.*".
func resourceName(gr schema.GroupResource) string {
	if gr.Group == "" {
		if gr.Resource == "*" {
			return "*."
		}
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// chainOf returns the keys of resource (the store's name), nil when the
// configuration does not list it: the resource, then its group's wildcard,
// then "*.*", as kube looks them up.
func (t *Transformer) chainOf(resource string) *chain {
	if ch := t.byResource[resource]; ch != nil {
		return ch
	}
	_, group, _ := strings.Cut(resource, ".")
	if ch := t.byResource["*."+group]; ch != nil {
		return ch
	}
	return t.byResource["*.*"]
}

// Transforms reports whether the configuration lists resource.
func (t *Transformer) Transforms(resource string) bool { return t.chainOf(resource) != nil }

// authenticatedData is what aesgcm binds a ciphertext to: the object's
// path, as kube's etcd key (/registry/secrets/<namespace>/<name>).
func authenticatedData(k kv.Key) []byte {
	b := make([]byte, 0, len("/registry///")+len(k.Resource)+len(k.Namespace)+len(k.Name))
	b = append(b, "/registry/"...)
	b = append(b, k.Resource...)
	b = append(b, '/')
	if k.Namespace != "" {
		b = append(b, k.Namespace...)
		b = append(b, '/')
	}
	return append(b, k.Name...)
}

// ToStorage returns what is stored for the object at k whose plaintext is
// plain: plain itself when k's resource is not listed (or identity comes
// first), else the first key's ciphertext.
func (t *Transformer) ToStorage(k kv.Key, plain []byte) ([]byte, error) {
	ch := t.chainOf(k.Resource)
	if ch == nil {
		return plain, nil
	}
	first := ch.keys[0]
	if len(first.prefix) == 0 {
		return plain, nil
	}
	dst := make([]byte, 0, len(first.prefix)+64+len(plain))
	out, err := first.seal(append(dst, first.prefix...), plain, authenticatedData(k))
	if err != nil {
		return nil, fmt.Errorf("encryption: encrypt %s: %w", k, err)
	}
	return out, nil
}

// FromStorage returns the plaintext of the stored bytes of the object at
// k. stale reports that they were not written by the first key, so that a
// rewrite would store them differently. Data no key can read is an error:
// encrypted data of a resource the configuration does not list, a key it
// does not hold, a ciphertext that does not authenticate.
func (t *Transformer) FromStorage(k kv.Key, stored []byte) (plain []byte, stale bool, err error) {
	ch := t.chainOf(k.Resource)
	if ch == nil {
		if bytes.HasPrefix(stored, []byte(encPrefix)) {
			return nil, false, fmt.Errorf("encryption: %s is stored encrypted (%s) but the encryption configuration does not list %s",
				k, prefixOf(stored), k.Resource)
		}
		return stored, false, nil
	}
	for i, ck := range ch.keys {
		if !bytes.HasPrefix(stored, ck.prefix) {
			continue
		}
		out, err := ck.open(stored[len(ck.prefix):], authenticatedData(k))
		if err != nil {
			if len(ck.prefix) == 0 {
				continue // identity: let a later provider try
			}
			return nil, false, fmt.Errorf("encryption: decrypt %s with %s: %w", k, ck.prefix, err)
		}
		return out, i != 0, nil
	}
	return nil, false, fmt.Errorf("encryption: %s: no key of the encryption configuration reads data stored as %q",
		k, prefixOf(stored))
}

// prefixOf names the provider and key of stored data, for errors.
func prefixOf(stored []byte) string {
	if !bytes.HasPrefix(stored, []byte(encPrefix)) {
		return "unencrypted"
	}
	// k8s:enc:<provider>:v1:<key>:
	n, i := 0, 0
	for i = range stored {
		if stored[i] == ':' {
			n++
			if n == 5 {
				return string(stored[:i+1])
			}
		}
		if i > 300 {
			break
		}
	}
	return encPrefix + "…"
}
