package controllers

import "sync/atomic"

// Stats are the controllers' counters since the Manager was built (the
// resyncs are also litek8s_controller_resyncs_total, see metrics.go).
type Stats struct {
	// Terms is the number of leadership terms the controllers ran in.
	Terms uint64
	// Resyncs counts relists of informers that fell behind the change
	// feed (or whose watch failed): the goal is none under normal load.
	Resyncs uint64
	// GCDeletes counts the objects the garbage collector deleted (DELETE
	// calls that succeeded); GCRefsRemoved the ownerReferences it removed
	// (orphaning and dangling references); GCFinalizersRemoved the
	// foregroundDeletion and orphan finalizers it removed.
	GCDeletes, GCRefsRemoved, GCFinalizersRemoved uint64
}

// counters are the live Stats.
type counters struct {
	terms, gcDeletes, gcRefsRemoved, gcFinalizersRemoved atomic.Uint64
	// resyncs are the shared informers', gcResyncs the garbage
	// collector's monitors'.
	resyncs, gcResyncs atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{Terms: c.terms.Load(), Resyncs: c.resyncs.Load() + c.gcResyncs.Load(), GCDeletes: c.gcDeletes.Load(),
		GCRefsRemoved: c.gcRefsRemoved.Load(), GCFinalizersRemoved: c.gcFinalizersRemoved.Load()}
}
