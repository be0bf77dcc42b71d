package table

import (
	"net"
	"strconv"

	"github.com/tidwall/gjson"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// maxListed is how many items kube's printers list in one cell before
// "+ N more...".
const maxListed = 3

var endpointsColumns = []Column{
	nameColumn,
	{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
	ageColumn,
}

// endpointsCells follows kube's printEndpoints.
func endpointsCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(formatEndpoints(o.get("subsets")))
	w.age(o.created)
}

// formatEndpoints lists up to three "ip:port" (or bare ip for a subset
// without ports), then "+ N more...", or "<none>" without subsets.
func formatEndpoints(subsets gjson.Result) string {
	if countElems(subsets) == 0 {
		return "<none>"
	}
	var list []string
	count, more := 0, false
	add := func(addresses gjson.Result, port string) {
		forEachElem(addresses, func(a gjson.Result) bool {
			if len(list) == maxListed {
				more = true
				return false
			}
			ip := a.Get("ip").String()
			if port != "" {
				ip = net.JoinHostPort(ip, port)
			}
			list = append(list, ip)
			return true
		})
	}
	forEachElem(subsets, func(ss gjson.Result) bool {
		addresses := ss.Get("addresses")
		n := int(countElems(addresses))
		ports := ss.Get("ports")
		if countElems(ports) == 0 {
			count += n
			add(addresses, "")
			return true
		}
		forEachElem(ports, func(p gjson.Result) bool {
			count += n
			add(addresses, strconv.FormatInt(p.Get("port").Int(), 10))
			return true
		})
		return true
	})
	return joinMore(list, more, count, "")
}

// joinMore joins list with ",", adding " + N more..." when more; an empty
// result is def.
func joinMore(list []string, more bool, count int, def string) string {
	s := ""
	for i, e := range list {
		if i > 0 {
			s += ","
		}
		s += e
	}
	if more {
		return s + " + " + strconv.Itoa(count-maxListed) + " more..."
	}
	if s == "" {
		return def
	}
	return s
}

var endpointSliceColumns = []Column{
	nameColumn,
	{Name: "AddressType", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]},
	{Name: "Ports", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]},
	{Name: "Endpoints", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
	ageColumn,
}

// endpointSliceCells follows kube's printEndpointSlice: up to three ports
// (number, else name, else "*") and addresses, "<unset>" for none.
func endpointSliceCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.get("addressType").String())
	var ports []string
	count, more := 0, false
	forEachElem(o.get("ports"), func(p gjson.Result) bool {
		if len(ports) < maxListed {
			s := "*"
			if n := p.Get("port"); n.Type == gjson.Number {
				s = strconv.FormatInt(n.Int(), 10)
			} else if name := p.Get("name"); name.Type == gjson.String {
				s = name.Str
			}
			ports = append(ports, s)
		} else {
			more = true
		}
		count++
		return true
	})
	w.str(joinMore(ports, more, count, "<unset>"))
	var addrs []string
	count, more = 0, false
	forEachElem(o.get("endpoints"), func(e gjson.Result) bool {
		forEachElem(e.Get("addresses"), func(a gjson.Result) bool {
			if len(addrs) < maxListed {
				addrs = append(addrs, a.String())
			} else {
				more = true
			}
			count++
			return true
		})
		return true
	})
	w.str(joinMore(addrs, more, count, "<unset>"))
	w.age(o.created)
}
