package table

import (
	"slices"
	"strconv"
	"time"

	"github.com/tidwall/gjson"
)

// Pod reasons the Status column depends on.
const (
	podReasonNodeLost        = "NodeLost" // set on pods of an unreachable node
	podReasonSchedulingGated = "SchedulingGated"
	podReasonInitializing    = "PodInitializing"
)

// podCells follows kube's printPod with Wide set.
func podCells(o *object, w *rowWriter) {
	s := summarizePod(o.spec, o.status, o.deleting)
	w.str(o.name)
	w.ratio(s.ready, s.total)
	w.str(s.reason)
	w.restarts(s.restarts, s.lastRestart)
	w.age(o.created)
	w.strOr(podIP(o.status), "<none>")
	w.strOr(o.spec.Get("nodeName").String(), "<none>")
	w.strOr(o.status.Get("nominatedNodeName").String(), "<none>")
	w.readinessGates(o.spec.Get("readinessGates"), o.status.Get("conditions"))
}

// podSummary is what the Ready, Status and Restarts columns show.
type podSummary struct {
	ready, total int64
	reason       string
	restarts     int64
	lastRestart  time.Time // latest lastState.terminated.finishedAt counted
}

// summarizePod computes the Ready, Status and Restarts columns.
func summarizePod(spec, status gjson.Result, deleting bool) podSummary {
	phase := status.Get("phase").String()
	conditions := status.Get("conditions")
	s := podSummary{reason: phase, total: countElems(spec.Get("containers"))}
	if r := status.Get("reason").String(); r != "" {
		s.reason = r
	}
	if anyCondition(conditions, "PodScheduled", func(c gjson.Result) bool {
		return c.Get("reason").String() == podReasonSchedulingGated
	}) {
		s.reason = podReasonSchedulingGated
	}
	sidecars := restartableInitContainers(spec.Get("initContainers"))
	s.total += int64(len(sidecars))
	initializing, restarts, last := s.addInitContainers(spec, status, sidecars)
	if !initializing || firstConditionTrue(conditions, "Initialized") {
		s.restarts, s.lastRestart = restarts, last
		s.addContainers(status.Get("containerStatuses"), conditions)
	}
	if deleting {
		if status.Get("reason").String() == podReasonNodeLost {
			s.reason = "Unknown"
		} else if phase != "Failed" && phase != "Succeeded" {
			s.reason = "Terminating"
		}
	}
	return s
}

// addInitContainers counts the init containers' restarts and sets an
// "Init:…" reason for the first one that has not completed. It returns
// whether the pod is still initializing and the restarts (and latest
// restart) of the restartable (sidecar) init containers alone.
func (s *podSummary) addInitContainers(spec, status gjson.Result, sidecars []string) (initializing bool, restarts int64, last time.Time) {
	n := countElems(spec.Get("initContainers"))
	i := int64(-1)
	forEachElem(status.Get("initContainerStatuses"), func(r gjson.Result) bool {
		i++
		c := readContainerStatus(r)
		s.restarts += c.restarts
		s.lastRestart = later(s.lastRestart, c.lastFinished)
		sidecar := slices.Contains(sidecars, c.name)
		if sidecar {
			restarts += c.restarts
			last = later(last, c.lastFinished)
		}
		switch {
		case c.terminated && c.exitCode == 0:
			return true
		case sidecar && c.started:
			if c.ready {
				s.ready++
			}
			return true
		}
		s.reason = initReason(c, i, n)
		initializing = true
		return false
	})
	return initializing, restarts, last
}

// initReason is the Status of a pod whose i-th of n init containers has not
// completed.
func initReason(c containerStatus, i, n int64) string {
	switch {
	case c.terminated && c.terminatedReason != "":
		return "Init:" + c.terminatedReason
	case c.terminated && c.signal != 0:
		return "Init:Signal:" + strconv.FormatInt(c.signal, 10)
	case c.terminated:
		return "Init:ExitCode:" + strconv.FormatInt(c.exitCode, 10)
	case c.waiting && c.waitingReason != "" && c.waitingReason != podReasonInitializing:
		return "Init:" + c.waitingReason
	}
	return "Init:" + strconv.FormatInt(i, 10) + "/" + strconv.FormatInt(n, 10)
}

// addContainers counts the app containers' restarts and ready containers.
// The first container (in spec order) with a waiting or terminated reason
// gives the Status; a "Completed" pod with a running container is Running
// (or NotReady without the Ready condition).
func (s *podSummary) addContainers(statuses, conditions gjson.Result) {
	hasRunning, reasonSet := false, false
	forEachElem(statuses, func(r gjson.Result) bool {
		c := readContainerStatus(r)
		s.restarts += c.restarts
		s.lastRestart = later(s.lastRestart, c.lastFinished)
		reason := ""
		switch {
		case c.waiting && c.waitingReason != "":
			reason = c.waitingReason
		case c.terminated && c.terminatedReason != "":
			reason = c.terminatedReason
		case c.terminated && c.signal != 0:
			reason = "Signal:" + strconv.FormatInt(c.signal, 10)
		case c.terminated:
			reason = "ExitCode:" + strconv.FormatInt(c.exitCode, 10)
		case c.ready && c.running:
			hasRunning = true
			s.ready++
		}
		if reason != "" && !reasonSet {
			s.reason, reasonSet = reason, true
		}
		return true
	})
	if s.reason == "Completed" && hasRunning {
		s.reason = "NotReady"
		if anyCondition(conditions, "Ready", isTrue) {
			s.reason = "Running"
		}
	}
}
