package crdvalidation

import (
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Key names one CRD version's schema: a CRD's spec (and so its schemas)
// changes only with its generation.
type Key struct {
	UID        types.UID
	Generation int64
	Version    string
}

// Compiler compiles the rules of the CRD versions a registry serves,
// reusing those it compiled for the previous registry: a rebuild calls
// Rules for every served version, then Done, which forgets the versions
// no longer served.
type Compiler struct {
	mu sync.Mutex // protects prev and next
	// prev are the rules of the last completed rebuild, next those of
	// the current one.
	prev, next map[Key]*Rules
}

// Rules returns the compiled rules of the version k whose structural
// schema is s (nil when it has none).
func (c *Compiler) Rules(k Key, s *structuralschema.Structural) *Rules {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.next[k]
	if !ok {
		if r, ok = c.prev[k]; !ok {
			r = Compile(s)
		}
		if c.next == nil {
			c.next = map[Key]*Rules{}
		}
		c.next[k] = r
	}
	return r
}

// Done ends a rebuild: the next one reuses only what this one used.
func (c *Compiler) Done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prev, c.next = c.next, nil
}
