package table

import (
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

// containerStatus is the part of a v1.ContainerStatus the pod columns use.
type containerStatus struct {
	name                    string
	restarts                int64
	ready, started, running bool
	waiting, terminated     bool
	waitingReason           string
	terminatedReason        string
	exitCode, signal        int64
	lastFinished            time.Time // lastState.terminated.finishedAt
}

func readContainerStatus(r gjson.Result) containerStatus {
	state := r.Get("state")
	c := containerStatus{
		name:     r.Get("name").String(),
		restarts: r.Get("restartCount").Int(),
		ready:    r.Get("ready").Bool(),
		started:  r.Get("started").Bool(),
		running:  state.Get("running").IsObject(),
	}
	if wt := state.Get("waiting"); wt.IsObject() {
		c.waiting, c.waitingReason = true, wt.Get("reason").String()
	}
	if t := state.Get("terminated"); t.IsObject() {
		c.terminated, c.terminatedReason = true, t.Get("reason").String()
		c.exitCode, c.signal = t.Get("exitCode").Int(), t.Get("signal").Int()
	}
	if t := r.Get("lastState.terminated"); t.IsObject() {
		c.lastFinished = parseTime(t.Get("finishedAt"))
	}
	return c
}

// restartableInitContainers returns the names of the init containers with
// restartPolicy Always (sidecars), which count as app containers.
func restartableInitContainers(specs gjson.Result) []string {
	var names []string
	forEachElem(specs, func(c gjson.Result) bool {
		if c.Get("restartPolicy").String() == "Always" {
			names = append(names, c.Get("name").String())
		}
		return true
	})
	return names
}

// podIP is status.podIP, else the first of status.podIPs (kube's
// conversion keeps podIP authoritative).
func podIP(status gjson.Result) string {
	if ip := status.Get("podIP").String(); ip != "" {
		return ip
	}
	return status.Get("podIPs.0.ip").String()
}

// restarts writes the Restarts cell: the count, and when a container has
// restarted, the age of the latest restart (rendered at request time).
func (w *rowWriter) restarts(n int64, last time.Time) {
	w.begin()
	w.buf = strconv.AppendInt(w.buf, n, 10)
	if n != 0 && !last.IsZero() {
		w.endSince(last)
		return
	}
	w.end()
}

// readinessGates writes "<true>/<gates>" over the pod's readiness gates
// (each judged by the first condition of its type), or "<none>".
func (w *rowWriter) readinessGates(gates, conditions gjson.Result) {
	var n, ok int64
	forEachElem(gates, func(g gjson.Result) bool {
		n++
		if firstConditionTrue(conditions, g.Get("conditionType").String()) {
			ok++
		}
		return true
	})
	if n == 0 {
		w.str("<none>")
		return
	}
	w.ratio(ok, n)
}

// firstConditionTrue reports whether the first condition of type typ has
// status True.
func firstConditionTrue(conditions gjson.Result, typ string) bool {
	result := false
	forEachElem(conditions, func(c gjson.Result) bool {
		if c.Get("type").String() != typ {
			return true
		}
		result = isTrue(c)
		return false
	})
	return result
}

// anyCondition reports whether some condition of type typ satisfies pred.
func anyCondition(conditions gjson.Result, typ string, pred func(gjson.Result) bool) bool {
	found := false
	forEachElem(conditions, func(c gjson.Result) bool {
		found = c.Get("type").String() == typ && pred(c)
		return !found
	})
	return found
}

func isTrue(c gjson.Result) bool { return c.Get("status").String() == "True" }

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}
