package table

import (
	"strconv"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/litek8s/litek8s/internal/kv"
)

// Column is one Table column definition, as kube-apiserver sends it.
// Priority 1 marks a column kubectl shows only with -o wide.
type Column struct {
	Name, Type, Format, Description string
	Priority                        int
}

// Printer computes and renders the Table rows of one resource. A Printer is
// immutable: Columns must not be modified.
type Printer struct {
	Columns []Column

	cells cellsFunc // fills one row, in column order
	defs  []byte    // the encoded column definitions
	// custom, when set, computes the cells instead of cells (NewCustom).
	custom func(raw []byte) []kv.Cell
	// scratch holds *cellsScratch for Cells: every stored object's cells
	// are computed when it is applied or restored (a restore derives on
	// every CPU), and the reader and writer are 3 KiB of pointers that
	// would otherwise be allocated, typed and collected each time.
	scratch sync.Pool
}

// cellsScratch is what one Cells call reads an object into and writes
// its row with.
type cellsScratch struct {
	o object
	w rowWriter
}

// cellsFunc writes the cells of one object, in column order.
type cellsFunc func(o *object, w *rowWriter)

// printers is the registry, keyed by group-qualified plural. It is built at
// package initialisation and never written afterwards.
var printers = map[string]*Printer{
	"customresourcedefinitions.apiextensions.k8s.io": newPrinter(crdColumns, crdCells),
	"namespaces":                 newPrinter(namespaceColumns, namespaceCells),
	"configmaps":                 newPrinter(configMapColumns, configMapCells),
	"secrets":                    newPrinter(secretColumns, secretCells),
	"serviceaccounts":            newPrinter(serviceAccountColumns, serviceAccountCells),
	"services":                   newPrinter(serviceColumns, serviceCells),
	"pods":                       newPrinter(podColumns, podCells),
	"nodes":                      newPrinter(nodeColumns, nodeCells),
	"events":                     newPrinter(eventColumns, eventCells),
	"deployments.apps":           newPrinter(deploymentColumns, deploymentCells),
	"replicasets.apps":           newPrinter(replicaSetColumns, replicaSetCells),
	"leases.coordination.k8s.io": newPrinter(leaseColumns, leaseCells),

	"certificatesigningrequests.certificates.k8s.io": newPrinter(csrColumns, csrCells),
	"clustertrustbundles.certificates.k8s.io":        newPrinter(trustBundleColumns, trustBundleCells),
	"apiservices.apiregistration.k8s.io":             newPrinter(apiServiceColumns, apiServiceCells),

	"endpoints":              newPrinter(endpointsColumns, endpointsCells),
	"persistentvolumeclaims": newPrinter(persistentVolumeClaimColumns, persistentVolumeClaimCells),
	"persistentvolumes":      newPrinter(persistentVolumeColumns, persistentVolumeCells),
	"resourcequotas":         newPrinter(resourceQuotaColumns, resourceQuotaCells),
	"podtemplates":           newPrinter(podTemplateColumns, podTemplateCells),
	"replicationcontrollers": newPrinter(replicationControllerColumns, replicationControllerCells),

	"statefulsets.apps":        newPrinter(statefulSetColumns, statefulSetCells),
	"daemonsets.apps":          newPrinter(daemonSetColumns, daemonSetCells),
	"controllerrevisions.apps": newPrinter(controllerRevisionColumns, controllerRevisionCells),

	"jobs.batch":     newPrinter(jobColumns, jobCells),
	"cronjobs.batch": newPrinter(cronJobColumns, cronJobCells),

	"endpointslices.discovery.k8s.io": newPrinter(endpointSliceColumns, endpointSliceCells),

	"rolebindings.rbac.authorization.k8s.io":        newPrinter(roleBindingColumns, roleBindingCells),
	"clusterrolebindings.rbac.authorization.k8s.io": newPrinter(clusterRoleBindingColumns, roleBindingCells),

	"poddisruptionbudgets.policy": newPrinter(podDisruptionBudgetColumns, podDisruptionBudgetCells),

	"ingresses.networking.k8s.io":       newPrinter(ingressColumns, ingressCells),
	"ingressclasses.networking.k8s.io":  newPrinter(ingressClassColumns, ingressClassCells),
	"networkpolicies.networking.k8s.io": newPrinter(networkPolicyColumns, networkPolicyCells),

	"horizontalpodautoscalers.autoscaling": newPrinter(horizontalPodAutoscalerColumns, horizontalPodAutoscalerCells),

	"priorityclasses.scheduling.k8s.io": newPrinter(priorityClassColumns, priorityClassCells),

	"storageclasses.storage.k8s.io":          newPrinter(storageClassColumns, storageClassCells),
	"csidrivers.storage.k8s.io":              newPrinter(csiDriverColumns, csiDriverCells),
	"csinodes.storage.k8s.io":                newPrinter(csiNodeColumns, csiNodeCells),
	"csistoragecapacities.storage.k8s.io":    newPrinter(csiStorageCapacityColumns, csiStorageCapacityCells),
	"volumeattachments.storage.k8s.io":       newPrinter(volumeAttachmentColumns, volumeAttachmentCells),
	"volumeattributesclasses.storage.k8s.io": newPrinter(volumeAttributesClassColumns, volumeAttributesClassCells),

	"runtimeclasses.node.k8s.io": newPrinter(runtimeClassColumns, runtimeClassCells),

	"flowschemas.flowcontrol.apiserver.k8s.io":                 newPrinter(flowSchemaColumns, flowSchemaCells),
	"prioritylevelconfigurations.flowcontrol.apiserver.k8s.io": newPrinter(priorityLevelColumns, priorityLevelCells),

	"servicecidrs.networking.k8s.io": newPrinter(serviceCIDRColumns, serviceCIDRCells),
	"ipaddresses.networking.k8s.io":  newPrinter(ipAddressColumns, ipAddressCells),

	"deviceclasses.resource.k8s.io":          newPrinter(deviceClassColumns, nameAgeCells),
	"devicetaintrules.resource.k8s.io":       newPrinter(deviceTaintRuleColumns, deviceTaintRuleCells),
	"resourceclaims.resource.k8s.io":         newPrinter(resourceClaimColumns, resourceClaimCells),
	"resourceclaimtemplates.resource.k8s.io": newPrinter(deviceClassColumns, nameAgeCells),
	"resourceslices.resource.k8s.io":         newPrinter(resourceSliceColumns, resourceSliceCells),

	"events.events.k8s.io": newPrinter(eventColumns, eventsV1Cells),

	"validatingwebhookconfigurations.admissionregistration.k8s.io":   newPrinter(webhookColumns, webhookCells),
	"mutatingwebhookconfigurations.admissionregistration.k8s.io":     newPrinter(webhookColumns, webhookCells),
	"validatingadmissionpolicies.admissionregistration.k8s.io":       newPrinter(validatingAdmissionPolicyColumns, admissionPolicyCells("validations")),
	"validatingadmissionpolicybindings.admissionregistration.k8s.io": newPrinter(admissionPolicyBindingColumns, admissionPolicyBindingCells),
	"mutatingadmissionpolicies.admissionregistration.k8s.io":         newPrinter(mutatingAdmissionPolicyColumns, admissionPolicyCells("mutations")),
	"mutatingadmissionpolicybindings.admissionregistration.k8s.io":   newPrinter(admissionPolicyBindingColumns, admissionPolicyBindingCells),
}

// defaultPrinter mirrors the apiserver's default table convertor.
var defaultPrinter = newPrinter(defaultColumns, defaultCells)

// Lookup returns the printer for a group-qualified plural ("pods",
// "deployments.apps"), or the default one (Name, Created At) when the
// resource has no printer of its own.
func Lookup(groupResource string) *Printer {
	if p, ok := printers[groupResource]; ok {
		return p
	}
	return defaultPrinter
}

func newPrinter(columns []Column, cells cellsFunc) *Printer {
	if len(columns) > maxCells {
		panic("table: too many columns")
	}
	return &Printer{Columns: columns, cells: cells, defs: encodeColumns(columns)}
}

// Cells computes the cells of one stored object from its raw JSON, in column
// order, packed in one exactly sized Row. Clock-dependent cells (ages) are
// left for AppendCells to render. It is meant to run once per write; the
// result is immutable.
func (p *Printer) Cells(raw []byte) kv.Row {
	if p.custom != nil {
		return kv.MakeRow(p.custom(raw))
	}
	sc, _ := p.scratch.Get().(*cellsScratch)
	if sc == nil {
		sc = new(cellsScratch)
	}
	sc.w.reset()
	sc.o.read(gjson.ParseBytes(raw))
	p.cells(&sc.o, &sc.w)
	row := sc.w.done()
	sc.o.clear() // keep nothing of raw
	p.scratch.Put(sc)
	return row
}

// AppendRow appends the JSON array of the cells of raw computed now, as
// AppendCells(dst, p.Cells(raw), now) does, for cells computed at request
// time (custom resources' printers) without packing them first.
func (p *Printer) AppendRow(dst, raw []byte, now time.Time) []byte {
	if p.custom == nil {
		return AppendCells(dst, p.Cells(raw), now)
	}
	dst = append(dst, '[')
	for i, c := range p.custom(raw) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendCell(dst, &c, now)
	}
	return append(dst, ']')
}

// AppendColumnDefinitions appends the JSON array of the column definitions,
// each with all five keys, as kube-apiserver encodes them.
func (p *Printer) AppendColumnDefinitions(dst []byte) []byte {
	return append(dst, p.defs...)
}

func encodeColumns(columns []Column) []byte {
	b := []byte{'['}
	for i, c := range columns {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, c.Name)
		b = append(b, `,"type":`...)
		b = appendString(b, c.Type)
		b = append(b, `,"format":`...)
		b = appendString(b, c.Format)
		b = append(b, `,"description":`...)
		b = appendString(b, c.Description)
		b = append(b, `,"priority":`...)
		b = strconv.AppendInt(b, int64(c.Priority), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}
