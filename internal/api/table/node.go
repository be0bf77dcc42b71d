package table

import (
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

const (
	nodeRoleLabelPrefix = "node-role.kubernetes.io/" // node-role.kubernetes.io/<role>=""
	nodeRoleLabel       = "kubernetes.io/role"       // kubernetes.io/role=<role>
)

// nodeCells follows kube's printNode with Wide set. Kernel-Version carries
// the architecture, as 1.37 prints it: "6.1.0 (amd64)".
func nodeCells(o *object, w *rowWriter) {
	info := o.status.Get("nodeInfo")
	addresses := o.status.Get("addresses")
	w.str(o.name)
	w.str(nodeStatus(o.status.Get("conditions"), o.spec.Get("unschedulable").Bool()))
	w.joined(nodeRoles(o.labels), "<none>")
	w.age(o.created)
	w.str(info.Get("kubeletVersion").String())
	w.str(nodeAddress(addresses, "InternalIP"))
	w.str(nodeAddress(addresses, "ExternalIP"))
	w.strOr(info.Get("osImage").String(), "<unknown>")
	w.kernelVersion(info)
	w.strOr(info.Get("containerRuntimeVersion").String(), "<unknown>")
}

// nodeStatus is "Ready", "NotReady" or "Unknown" from the (last) Ready
// condition, with ",SchedulingDisabled" for a cordoned node.
func nodeStatus(conditions gjson.Result, unschedulable bool) string {
	s := "Unknown"
	forEachElem(conditions, func(c gjson.Result) bool {
		if c.Get("type").String() == "Ready" {
			s = "NotReady"
			if c.Get("status").String() == "True" {
				s = "Ready"
			}
		}
		return true
	})
	if unschedulable {
		s += ",SchedulingDisabled"
	}
	return s
}

// nodeRoles returns the sorted, distinct roles named by the
// node-role.kubernetes.io/<role> and kubernetes.io/role=<role> labels.
func nodeRoles(labels gjson.Result) []string {
	var roles []string
	forEachMember(labels, func(k, v gjson.Result) bool {
		key := k.String()
		if role, ok := strings.CutPrefix(key, nodeRoleLabelPrefix); ok && role != "" {
			roles = append(roles, role)
		} else if key == nodeRoleLabel && v.String() != "" {
			roles = append(roles, v.String())
		}
		return true
	})
	slices.Sort(roles)
	return slices.Compact(roles)
}

// nodeAddress returns the first address of the given type, or "<none>".
func nodeAddress(addresses gjson.Result, typ string) string {
	addr := "<none>"
	forEachElem(addresses, func(a gjson.Result) bool {
		if a.Get("type").String() == typ {
			addr = a.Get("address").String()
			return false
		}
		return true
	})
	return addr
}

// kernelVersion writes "<kernel> (<arch>)", the kernel being "<unknown>"
// when empty; without an architecture only the kernel is written.
func (w *rowWriter) kernelVersion(info gjson.Result) {
	w.begin()
	kernel := info.Get("kernelVersion").String()
	if kernel == "" {
		kernel = "<unknown>"
	}
	w.text(kernel)
	if arch := info.Get("architecture").String(); arch != "" {
		w.buf = append(w.buf, ' ', '(')
		w.text(arch)
		w.buf = append(w.buf, ')')
	}
	w.end()
}
