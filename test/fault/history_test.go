package fault

import (
	"strings"
	"testing"
	"time"
)

func TestHistoryCheck(t *testing.T) {
	t0 := time.Unix(0, 0)
	op := func(client, key string, o Outcome, rv uint64, at int) Op {
		return Op{Client: client, Member: "m0", Key: key, Outcome: o, RV: rv,
			Start: t0.Add(time.Duration(at) * time.Millisecond), End: t0.Add(time.Duration(at+1) * time.Millisecond)}
	}
	good := func() *History {
		h := &History{}
		h.Add(op("c1", "ns/a", OK, 10, 1))
		h.Add(op("c1", "ns/b", OK, 12, 2))
		h.Add(op("c2", "ns/c", Unknown, 0, 1)) // done after all
		h.Add(op("c2", "ns/d", Unknown, 0, 3)) // not done
		h.Add(op("c2", "ns/e", Failed, 0, 4))
		h.AddWatch(&Watch{Member: "m1", From: 10, Events: []Event{{Type: "ADDED", Key: "ns/c", RV: 11}, {Type: "ADDED", Key: "ns/b", RV: 12}}})
		h.AddWatch(&Watch{Member: "m2", From: 0, Events: []Event{{Type: "ADDED", Key: "ns/a", RV: 10}, {Type: "ERROR", Code: 410}}})
		return h
	}
	state := func() State { return State{"ns/a": 10, "ns/b": 12, "ns/c": 11} }
	states := func() map[string]State { return map[string]State{"m0": state(), "m1": state(), "m2": state()} }
	if bad := good().Check(states()); bad != nil {
		t.Fatalf("a good history: %v", bad)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*History, map[string]State)
		want   string
	}{
		{"lost on one member", func(h *History, s map[string]State) { delete(s["m2"], "ns/b") }, "LOST: ns/b"},
		{"another version", func(h *History, s map[string]State) { s["m1"]["ns/a"] = 99 }, "disagree"},
		{"from nowhere", func(h *History, s map[string]State) {
			for _, st := range s {
				st["ns/zz"] = 20
			}
		}, "never written"},
		{"refused but there", func(h *History, s map[string]State) {
			for _, st := range s {
				st["ns/e"] = 13
			}
		}, "was refused"},
		{"one version twice", func(h *History, s map[string]State) { h.Add(op("c3", "ns/f", OK, 12, 5)) }, "acknowledged for"},
		{"a client's versions go back", func(h *History, s map[string]State) { h.ops[1].RV = 9 }, "after an earlier write"},
		{"a watch gap", func(h *History, s map[string]State) {
			h.watches[0].Events = []Event{{Type: "ADDED", Key: "ns/b", RV: 12}}
		}, "a gap"},
		{"a watch error that is not 410", func(h *History, s map[string]State) {
			h.watches[1].Events = []Event{{Type: "ERROR", Code: 500}}
		}, "ERROR 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, s := good(), states()
			tc.mutate(h, s)
			bad := h.Check(s)
			if !strings.Contains(strings.Join(bad, "\n"), tc.want) {
				t.Fatalf("want a violation with %q, got %v", tc.want, bad)
			}
		})
	}
	ok, failed, unknown := good().Counts()
	if ok != 2 || failed != 1 || unknown != 2 {
		t.Errorf("counts %d %d %d", ok, failed, unknown)
	}
	if d := good().Dump(); !strings.Contains(d, "ns/a rv=10") {
		t.Errorf("dump: %s", d)
	}
}
