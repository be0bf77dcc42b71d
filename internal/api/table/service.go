package table

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// serviceCells follows kube's printService with Wide set, as the apiserver
// prints (so load-balancer addresses are not clipped). A missing type is
// defaulted to ClusterIP and a missing port protocol to TCP, as kube does.
func serviceCells(o *object, w *rowWriter) {
	typ := o.spec.Get("type").String()
	if typ == "" {
		typ = "ClusterIP"
	}
	w.str(o.name)
	w.str(typ)
	w.str(clusterIP(o.spec))
	w.str(externalIP(typ, o.spec, o.status.Get("loadBalancer.ingress")))
	w.ports(o.spec.Get("ports"))
	w.age(o.created)
	w.labelSet(o.spec.Get("selector"))
}

// clusterIP returns the first of clusterIPs (which kube's defaulting fills
// from clusterIP), or "<none>".
func clusterIP(spec gjson.Result) string {
	if first := spec.Get("clusterIPs.0"); first.Exists() {
		return first.String()
	}
	if ip := spec.Get("clusterIP").String(); ip != "" {
		return ip
	}
	return "<none>"
}

// externalIP follows kube's getServiceExternalIP.
func externalIP(typ string, spec, ingress gjson.Result) string {
	external := stringArray(spec.Get("externalIPs"))
	switch typ {
	case "ClusterIP", "NodePort":
		if len(external) > 0 {
			return strings.Join(external, ",")
		}
		return "<none>"
	case "LoadBalancer":
		lb := loadBalancerIPs(ingress)
		if len(external) > 0 {
			return strings.Join(append(lb, external...), ",")
		}
		if len(lb) > 0 {
			return strings.Join(lb, ",")
		}
		return "<pending>"
	case "ExternalName":
		return spec.Get("externalName").String()
	}
	return "<unknown>"
}

// loadBalancerIPs returns the sorted, de-duplicated ip (or hostname) of
// each load-balancer ingress.
func loadBalancerIPs(ingress gjson.Result) []string {
	var out []string
	forEachElem(ingress, func(in gjson.Result) bool {
		if ip := in.Get("ip").String(); ip != "" {
			out = append(out, ip)
		} else if host := in.Get("hostname").String(); host != "" {
			out = append(out, host)
		}
		return true
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// ports writes the Port(s) cell: "port/proto" or "port:nodePort/proto",
// joined with ",", or "<none>".
func (w *rowWriter) ports(ports gjson.Result) {
	w.begin()
	forEachElem(ports, func(p gjson.Result) bool {
		if !w.blank() {
			w.buf = append(w.buf, ',')
		}
		w.buf = strconv.AppendInt(w.buf, p.Get("port").Int(), 10)
		if np := p.Get("nodePort").Int(); np > 0 {
			w.buf = append(w.buf, ':')
			w.buf = strconv.AppendInt(w.buf, np, 10)
		}
		w.buf = append(w.buf, '/')
		proto := p.Get("protocol").String()
		if proto == "" {
			proto = "TCP"
		}
		w.text(proto)
		return true
	})
	if w.blank() {
		w.text("<none>")
	}
	w.end()
}
