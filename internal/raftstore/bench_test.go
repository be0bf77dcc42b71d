package raftstore

import (
	"bytes"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/litek8s/litek8s/internal/kv"
)

// filledStore returns a Store (FSM only, no Raft) holding n ConfigMaps of
// about 400 stored bytes in namespace "ns", plus a few in other namespaces,
// applied through the FSM in batches as Raft would.
func filledStore(tb testing.TB, n int) *Store {
	tb.Helper()
	h := newHarness(tb, 1000, 10)
	labels := map[string]string{"app": "web", "tier": "frontend"}
	var batch []*raft.Log
	flush := func() {
		for _, r := range h.f.ApplyBatch(batch) {
			if res := r.(*applyResult); res.err != nil {
				tb.Fatal(res.err)
			}
		}
		batch = batch[:0]
	}
	for i := range n {
		name := "config-" + strconv.Itoa(i)
		batch = append(batch, h.log(kv.Write{Op: kv.OpCreate, Key: cmKey("ns", name),
			Object: configMap("ns", name, "6f1c2e7a-0b7e-4d59-9c1e-"+strconv.Itoa(100000000000+i), labels, 150)}))
		if len(batch) == 256 {
			flush()
		}
	}
	for _, ns := range []string{"a", "zz"} {
		batch = append(batch, h.log(kv.Write{Op: kv.OpCreate, Key: cmKey(ns, "x"), Object: configMap(ns, "x", "u", nil, 10)}))
	}
	flush()
	return &Store{fsm: h.f}
}

// listInto renders a list of configmaps in ns into buf the way a list
// response does: the stored bytes of each item, joined.
func listInto(tb testing.TB, s *Store, buf []byte) []byte {
	l, err := s.List(tb.Context(), "configmaps", "ns", false)
	if err != nil {
		tb.Fatal(err)
	}
	buf = buf[:0]
	l.Range("", func(obj *kv.Object) bool {
		buf = append(buf, '{')
		buf = append(buf, obj.Raw[obj.BodyStart:]...)
		buf = append(buf, ',')
		return true
	})
	return buf
}

func BenchmarkList(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			s := filledStore(b, n)
			buf := listInto(b, s, nil) // size the buffer once
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				buf = listInto(b, s, buf)
			}
		})
	}
}

func TestListAllocsConstant(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 10,000 objects")
	}
	allocs := func(n int) float64 {
		s := filledStore(t, n)
		buf := listInto(t, s, nil)
		if got := bytes.Count(buf, []byte(`{"metadata":`)); got != n {
			t.Fatalf("list rendered %d items, want %d", got, n)
		}
		return testing.AllocsPerRun(50, func() { buf = listInto(t, s, buf) })
	}
	small, large := allocs(100), allocs(10000)
	t.Logf("allocs per list: %v for 100 objects, %v for 10,000", small, large)
	if large > small+1 {
		t.Errorf("allocations grow with the number of objects: %v for 100, %v for 10,000", small, large)
	}
}

func BenchmarkApply(b *testing.B) {
	obj := configMap("ns", "config", "6f1c2e7a-0b7e-4d59-9c1e-0a1b2c3d4e5f", map[string]string{"app": "web", "tier": "frontend"}, 150)
	b.Run("create", func(b *testing.B) {
		f := newFSM(nil, 10000, 100)
		b.SetBytes(int64(len(obj)))
		b.ReportAllocs()
		var idx uint64
		for b.Loop() {
			idx++
			w := kv.Write{Op: kv.OpCreate, Key: cmKey("ns", "config-"+strconv.FormatUint(idx, 10)), Object: obj}
			res := f.Apply(&raft.Log{Index: idx, Type: raft.LogCommand, Data: encodeRecord(&w)}).(*applyResult)
			if res.err != nil {
				b.Fatal(res.err)
			}
		}
	})
	b.Run("update", func(b *testing.B) {
		const keys = 1000
		f := newFSM(nil, 10000, 100)
		var idx uint64
		names := make([]string, keys)
		for i := range names {
			names[i] = "config-" + strconv.Itoa(i)
			idx++
			w := kv.Write{Op: kv.OpCreate, Key: cmKey("ns", names[i]), Object: obj}
			f.Apply(&raft.Log{Index: idx, Type: raft.LogCommand, Data: encodeRecord(&w)})
		}
		b.SetBytes(int64(len(obj)))
		b.ReportAllocs()
		for b.Loop() {
			idx++
			w := kv.Write{Op: kv.OpUpdate, Key: cmKey("ns", names[idx%keys]), Object: obj}
			res := f.Apply(&raft.Log{Index: idx, Type: raft.LogCommand, Data: encodeRecord(&w)}).(*applyResult)
			if res.err != nil {
				b.Fatal(res.err)
			}
		}
	})
}

// BenchmarkWatchFanout applies one create that n watchers of the namespace
// wait for, and receives it on every watcher: the FSM's part of a watch
// fan-out (encoding and sending the events is the API's).
func BenchmarkWatchFanout(b *testing.B) {
	obj := configMap("ns", "config", "6f1c2e7a-0b7e-4d59-9c1e-0a1b2c3d4e5f", map[string]string{"app": "web"}, 150)
	for _, n := range []int{100, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			f := newFSM(nil, 10000, 100)
			ws := make([]*Watcher, n)
			for i := range ws {
				w, err := f.watch("configmaps", "ns", 0)
				if err != nil {
					b.Fatal(err)
				}
				defer w.Stop()
				ws[i] = w
			}
			b.ReportAllocs()
			var idx uint64
			var evs []kv.Event
			for b.Loop() {
				idx++
				w := kv.Write{Op: kv.OpCreate, Key: cmKey("ns", "config-"+strconv.FormatUint(idx, 10)), Object: obj}
				if res := f.Apply(&raft.Log{Index: idx, Type: raft.LogCommand, Data: encodeRecord(&w)}).(*applyResult); res.err != nil {
					b.Fatal(res.err)
				}
				for _, w := range ws {
					<-w.Ready()
					if evs, _ = w.Take(evs[:0]); len(evs) != 1 || evs[0].Object.RV != idx {
						b.Fatalf("events %v, want one at %d", evs, idx)
					}
				}
			}
		})
	}
}

// BenchmarkPropose proposes creates on the leader of a 3-member cluster
// (real Raft over TCP on 127.0.0.1, its log on disk) from 8 goroutines per
// CPU, every member with a metrics registry as in a real member (so
// hashicorp/raft's go-metrics are bridged). ns/op is per write, allocs/op
// every goroutine's of the process (the three members').
func BenchmarkPropose(b *testing.B) {
	c := newTestCluster(b, 3, func(cfg *Config) { cfg.Metrics = prometheus.NewRegistry() })
	s := c.store(c.WaitLeader())
	var n atomic.Int64
	b.SetParallelism(8)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			name := "config-" + strconv.FormatInt(n.Add(1), 10)
			if _, err := s.Propose(b.Context(), cmWrite(kv.OpCreate, "ns", name, 0)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
