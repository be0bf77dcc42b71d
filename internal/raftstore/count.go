package raftstore

// Count returns the number of objects of resource in namespace (all when
// empty) at the applied revision. It does not allocate while the
// resource is unchanged (or has no objects at all): the API's quota
// admission asks it on every write to know whether the namespace has
// quotas.
func (s *Store) Count(resource, namespace string) int {
	f := s.fsm
	f.mu.Lock()
	t := f.objs.tables[resource]
	if t == nil || t.tree.Len() == 0 {
		f.mu.Unlock()
		return 0
	}
	v := f.objs.viewOf(resource)
	f.mu.Unlock()
	return v.count(namespace)
}

// objectCount returns the number of objects of every resource.
func (f *fsm) objectCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.objs.tables {
		n += t.tree.Len()
	}
	return n
}
