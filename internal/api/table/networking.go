package table

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	networkingv1 "k8s.io/api/networking/v1"
)

var ingressColumns = []Column{
	nameColumn,
	{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
	{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
	{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
	{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
	ageColumn,
}

// ingressCells follows kube's printIngress with Wide set (addresses are
// not clipped).
func ingressCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.optional(o.spec.Get("ingressClassName"), "<none>")
	w.str(ingressHosts(o.spec.Get("rules")))
	w.str(strings.Join(loadBalancerIPs(o.status.Get("loadBalancer.ingress")), ","))
	ports := "80"
	if countElems(o.spec.Get("tls")) > 0 {
		ports = "80, 443"
	}
	w.str(ports)
	w.age(o.created)
}

// ingressHosts follows kube's formatHosts: up to three rule hosts, then
// "+ N more..." counting every rule past the third; "*" when none.
func ingressHosts(rules gjson.Result) string {
	var list []string
	more := false
	n := 0
	forEachElem(rules, func(r gjson.Result) bool {
		n++
		if len(list) == maxListed {
			more = true
		}
		if host := r.Get("host").String(); !more && host != "" {
			list = append(list, host)
		}
		return true
	})
	if len(list) == 0 {
		return "*"
	}
	s := strings.Join(list, ",")
	if more {
		return s + " + " + strconv.Itoa(n-maxListed) + " more..."
	}
	return s
}

var ingressClassColumns = []Column{
	nameColumn,
	{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
	{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
	ageColumn,
}

// ingressClassCells follows kube's printIngressClass: " (default)" after
// the name of a default class, parameters as "Kind[.apiGroup]/name".
func ingressClassCells(o *object, w *rowWriter) {
	name := o.name
	if isDefaultClass(o, networkingv1.AnnotationIsDefaultIngressClass) {
		name += " (default)"
	}
	w.str(name)
	w.str(o.spec.Get("controller").String())
	params := "<none>"
	if p := o.spec.Get("parameters"); p.IsObject() {
		params = p.Get("kind").String()
		if g := p.Get("apiGroup"); g.Type == gjson.String {
			params += "." + g.Str
		}
		params += "/" + p.Get("name").String()
	}
	w.str(params)
	w.age(o.created)
}

var networkPolicyColumns = []Column{
	nameColumn,
	{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
	ageColumn,
}

// networkPolicyCells follows kube's printNetworkPolicy.
func networkPolicyCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(formatSelector(o.spec.Get("podSelector")))
	w.age(o.created)
}
