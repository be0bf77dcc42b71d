package table

import (
	"strconv"

	"github.com/tidwall/gjson"
	batchv1 "k8s.io/api/batch/v1"
)

var jobColumns = []Column{
	nameColumn,
	{Name: "Status", Type: "string", Description: "Status of the job."},
	{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
	{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
	ageColumn,
	{Name: "Containers", Type: "string", Priority: 1, Description: descContainers},
	{Name: "Images", Type: "string", Priority: 1, Description: descImages},
	{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
}

// jobCells follows kube's printJob with Wide set. A running job's Duration
// is a clock cell (the age of its start time).
func jobCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(jobStatus(o.status.Get("conditions"), o.deleting))
	w.jobCompletions(o.spec, o.status.Get("succeeded").Int())
	start, done := parseTime(o.status.Get("startTime")), parseTime(o.status.Get("completionTime"))
	switch {
	case start.IsZero():
		w.str("")
	case done.IsZero():
		w.age(start)
	default:
		w.duration(done.Sub(start))
	}
	w.age(o.created)
	containers := o.spec.Get("template.spec.containers")
	w.joinField(containers, "name")
	w.joinField(containers, "image")
	w.str(formatSelector(o.spec.Get("selector")))
}

// jobStatus: Complete, Failed, Terminating, Suspended, FailureTarget,
// SuccessCriteriaMet or Running, in that precedence, from conditions whose
// first occurrence of a type has status True.
func jobStatus(conditions gjson.Result, deleting bool) string {
	has := func(typ string) bool {
		found := false
		forEachElem(conditions, func(c gjson.Result) bool {
			if c.Get("type").String() != typ {
				return true
			}
			found = c.Get("status").String() == "True"
			return false
		})
		return found
	}
	switch {
	case has("Complete"):
		return "Complete"
	case has("Failed"):
		return "Failed"
	case deleting:
		return "Terminating"
	case has("Suspended"):
		return "Suspended"
	case has("FailureTarget"):
		return "FailureTarget"
	case has("SuccessCriteriaMet"):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

// jobCompletions writes "succeeded/completions", or for a job without
// completions "succeeded/1", with " of <parallelism>" when more than one
// pod runs at once.
func (w *rowWriter) jobCompletions(spec gjson.Result, succeeded int64) {
	if c := spec.Get("completions"); c.Type == gjson.Number {
		w.ratio(succeeded, c.Int())
		return
	}
	w.begin()
	w.buf = strconv.AppendInt(w.buf, succeeded, 10)
	w.buf = append(w.buf, "/1"...)
	if p := spec.Get("parallelism").Int(); p > 1 {
		w.buf = append(w.buf, " of "...)
		w.buf = strconv.AppendInt(w.buf, p, 10)
	}
	w.end()
}

var cronJobColumns = []Column{
	nameColumn,
	{Name: "Schedule", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]},
	{Name: "Timezone", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
	{Name: "Suspend", Type: "boolean", Description: batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]},
	{Name: "Active", Type: "integer", Description: batchv1.CronJobStatus{}.SwaggerDoc()["active"]},
	{Name: "Last Schedule", Type: "string", Description: batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
	ageColumn,
	{Name: "Containers", Type: "string", Priority: 1, Description: descContainers},
	{Name: "Images", Type: "string", Priority: 1, Description: descImages},
	{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
}

// cronJobCells follows kube's printCronJob with Wide set. Suspend is the
// string "True", "False" or "<unset>" although the column says boolean, as
// kube sends it.
func cronJobCells(o *object, w *rowWriter) {
	w.str(o.name)
	w.str(o.spec.Get("schedule").String())
	w.optional(o.spec.Get("timeZone"), "<none>")
	w.str(boolPtr(o.spec.Get("suspend")))
	w.num(countElems(o.status.Get("active")))
	w.ageOr(parseTime(o.status.Get("lastScheduleTime")), "<none>")
	w.age(o.created)
	job := o.spec.Get("jobTemplate.spec")
	containers := job.Get("template.spec.containers")
	w.joinField(containers, "name")
	w.joinField(containers, "image")
	w.str(formatSelector(job.Get("selector")))
}

// boolPtr renders an optional boolean as kube's printBoolPtr.
func boolPtr(v gjson.Result) string {
	switch v.Type {
	case gjson.True:
		return "True"
	case gjson.False:
		return "False"
	}
	return "<unset>"
}
