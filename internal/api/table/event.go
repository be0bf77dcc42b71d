package table

import (
	"strings"
	"time"
)

// eventCells follows kube's printEvent with Wide set: Last Seen, Type,
// Reason, Object, Subobject, Source, Message, First Seen, Count, Name.
func eventCells(o *object, w *rowWriter) {
	e := &o.event
	first, last, count := e.times()
	w.age(last)
	w.str(o.typ.String())
	w.str(e.reason.String())
	w.eventTarget(e.involvedObject.Get("kind").String(), e.involvedObject.Get("name").String())
	w.str(e.involvedObject.Get("fieldPath").String())
	w.eventSource(e)
	w.str(strings.TrimSpace(e.message.String()))
	w.age(first)
	w.num(count)
	w.str(o.name)
}

// times returns when the event was first and last seen and its count:
// firstTimestamp (else eventTime); lastTimestamp (else first); a series
// overrides last and count; a singleton without count counts 1.
func (e *eventMembers) times() (first, last time.Time, count int64) {
	first = parseTime(e.firstTimestamp)
	if first.IsZero() {
		first = parseTime(e.eventTime)
	}
	last = parseTime(e.lastTimestamp)
	if last.IsZero() {
		last = first
	}
	count = e.count.Int()
	if e.series.IsObject() {
		last = parseTime(e.series.Get("lastObservedTime"))
		count = e.series.Get("count").Int()
	} else if count == 0 {
		count = 1
	}
	return first, last, count
}

// eventTarget writes "kind/name" with the kind in lower case, or the kind
// alone when the name is empty.
func (w *rowWriter) eventTarget(kind, name string) {
	w.begin()
	w.text(strings.ToLower(kind))
	if name != "" {
		w.buf = append(w.buf, '/')
		w.text(name)
	}
	w.end()
}

// eventSource writes "component, host": source.component (else
// reportingComponent), then source.host (else reportingInstance) if any.
func (w *rowWriter) eventSource(e *eventMembers) {
	component := e.source.Get("component").String()
	if component == "" {
		component = e.reportingComponent.String()
	}
	host := e.source.Get("host").String()
	if host == "" {
		host = e.reportingInstance.String()
	}
	w.begin()
	w.text(component)
	if host != "" {
		w.buf = append(w.buf, ',', ' ')
		w.text(host)
	}
	w.end()
}

// eventsV1Cells prints an events.k8s.io/v1 Event with the core printer,
// as kube does after converting it: regarding is the involved object, note
// the message, deprecatedSource/FirstTimestamp/LastTimestamp/Count the
// source, times and count, reportingController the reporting component.
func eventsV1Cells(o *object, w *rowWriter) {
	e := &o.event // eventTime, reason, series and reportingInstance share names
	e.involvedObject = o.get("regarding")
	e.message = o.get("note")
	e.source = o.get("deprecatedSource")
	e.firstTimestamp = o.get("deprecatedFirstTimestamp")
	e.lastTimestamp = o.get("deprecatedLastTimestamp")
	e.count = o.get("deprecatedCount")
	e.reportingComponent = o.get("reportingController")
	eventCells(o, w)
}
