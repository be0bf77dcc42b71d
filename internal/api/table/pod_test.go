package table

import (
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

var podNow = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// podJSON builds a pod created 10 minutes before podNow.
func podJSON(meta, spec, status string) string {
	if meta != "" {
		meta = "," + meta
	}
	return `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","creationTimestamp":"2026-11-30T09:50:00Z"` + meta +
		`},"spec":` + spec + `,"status":` + status + `}`
}

const (
	oneContainer  = `{"containers":[{"name":"app","image":"img"}]}`
	twoContainers = `{"containers":[{"name":"a","image":"img"},{"name":"b","image":"img"}]}`
	withInit      = `{"initContainers":[{"name":"init","image":"img"}],"containers":[{"name":"app","image":"img"}]}`
	withSidecar   = `{"initContainers":[{"name":"side","image":"img","restartPolicy":"Always"}],"containers":[{"name":"app","image":"img"}]}`
	running       = `{"name":"app","ready":true,"restartCount":0,"started":true,"state":{"running":{"startedAt":"2026-11-30T09:50:05Z"}}}`
	readyTrue     = `{"type":"Ready","status":"True"}`
	initializedF  = `{"type":"Initialized","status":"False"}`
)

// TestPodStatus covers the Ready, Status and Restarts columns.
func TestPodStatus(t *testing.T) {
	tests := []struct {
		name                    string
		pod                     string
		ready, status, restarts string
	}{
		{"pending", podJSON("", oneContainer, `{"phase":"Pending"}`), "0/1", "Pending", "0"},
		{"running", podJSON("", oneContainer,
			`{"phase":"Running","conditions":[`+readyTrue+`],"containerStatuses":[`+running+`]}`),
			"1/1", "Running", "0"},
		{"terminating", podJSON(`"deletionTimestamp":"2026-11-30T09:59:30Z"`, oneContainer,
			`{"phase":"Running","containerStatuses":[`+running+`]}`),
			"1/1", "Terminating", "0"},
		{"terminating but succeeded", podJSON(`"deletionTimestamp":"2026-11-30T09:59:30Z"`, oneContainer,
			`{"phase":"Succeeded","containerStatuses":[{"name":"app","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}`),
			"0/1", "Completed", "0"},
		{"node lost", podJSON(`"deletionTimestamp":"2026-11-30T09:59:30Z"`, oneContainer,
			`{"phase":"Running","reason":"NodeLost"}`),
			"0/1", "Unknown", "0"},
		{"completed", podJSON("", oneContainer,
			`{"phase":"Succeeded","containerStatuses":[{"name":"app","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}`),
			"0/1", "Completed", "0"},
		{"evicted", podJSON("", oneContainer, `{"phase":"Failed","reason":"Evicted"}`), "0/1", "Evicted", "0"},
		{"crash loop", podJSON("", oneContainer,
			`{"phase":"Running","containerStatuses":[{"name":"app","restartCount":5,"state":{"waiting":{"reason":"CrashLoopBackOff"}},`+
				`"lastState":{"terminated":{"exitCode":1,"reason":"Error","finishedAt":"2026-11-30T09:57:00Z"}}}]}`),
			"0/1", "CrashLoopBackOff", "5 (3m ago)"},
		{"exit code", podJSON("", oneContainer,
			`{"phase":"Running","containerStatuses":[{"name":"app","state":{"terminated":{"exitCode":3}}}]}`),
			"0/1", "ExitCode:3", "0"},
		{"signal", podJSON("", oneContainer,
			`{"phase":"Running","containerStatuses":[{"name":"app","state":{"terminated":{"exitCode":137,"signal":9}}}]}`),
			"0/1", "Signal:9", "0"},
		{"first container reason wins", podJSON("", twoContainers,
			`{"phase":"Pending","containerStatuses":[{"name":"a","state":{"waiting":{"reason":"ImagePullBackOff"}}},`+
				`{"name":"b","state":{"waiting":{"reason":"ContainerCreating"}}}]}`),
			"0/2", "ImagePullBackOff", "0"},
		{"completed with running container and ready", podJSON("", twoContainers,
			`{"phase":"Running","conditions":[`+readyTrue+`],"containerStatuses":[`+
				`{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},`+running+`]}`),
			"1/2", "Running", "0"},
		{"completed with running container not ready", podJSON("", twoContainers,
			`{"phase":"Running","containerStatuses":[`+
				`{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},`+running+`]}`),
			"1/2", "NotReady", "0"},
		{"init waiting", podJSON("", withInit,
			`{"phase":"Pending","conditions":[`+initializedF+`],"initContainerStatuses":[{"name":"init","state":{"waiting":{"reason":"PodInitializing"}}}],`+
				`"containerStatuses":[{"name":"app","state":{"waiting":{"reason":"PodInitializing"}}}]}`),
			"0/1", "Init:0/1", "0"},
		{"init running", podJSON("", withInit,
			`{"phase":"Pending","initContainerStatuses":[{"name":"init","restartCount":2,"state":{"running":{}},`+
				`"lastState":{"terminated":{"exitCode":1,"finishedAt":"2026-11-30T09:58:00Z"}}}]}`),
			"0/1", "Init:0/1", "2 (2m ago)"},
		{"init crash loop", podJSON("", withInit,
			`{"phase":"Pending","initContainerStatuses":[{"name":"init","state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}`),
			"0/1", "Init:CrashLoopBackOff", "0"},
		{"init error", podJSON("", withInit,
			`{"phase":"Pending","initContainerStatuses":[{"name":"init","state":{"terminated":{"exitCode":1,"reason":"Error"}}}]}`),
			"0/1", "Init:Error", "0"},
		{"init exit code", podJSON("", withInit,
			`{"phase":"Pending","initContainerStatuses":[{"name":"init","state":{"terminated":{"exitCode":2}}}]}`),
			"0/1", "Init:ExitCode:2", "0"},
		{"init signal", podJSON("", withInit,
			`{"phase":"Pending","initContainerStatuses":[{"name":"init","state":{"terminated":{"exitCode":137,"signal":9}}}]}`),
			"0/1", "Init:Signal:9", "0"},
		{"init done", podJSON("", withInit,
			`{"phase":"Running","conditions":[`+readyTrue+`],"initContainerStatuses":[{"name":"init","restartCount":1,"state":{"terminated":{"exitCode":0,"reason":"Completed"}}}],`+
				`"containerStatuses":[`+running+`]}`),
			"1/1", "Running", "0"},
		{"sidecar", podJSON("", withSidecar,
			`{"phase":"Running","conditions":[`+readyTrue+`],"initContainerStatuses":[{"name":"side","ready":true,"started":true,"restartCount":1,"state":{"running":{}}}],`+
				`"containerStatuses":[`+running+`]}`),
			"2/2", "Running", "1"},
		{"scheduling gated", podJSON("", oneContainer,
			`{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}`),
			"0/1", "SchedulingGated", "0"},
	}
	p := Lookup("pods")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := gjson.ParseBytes(AppendCells(nil, p.Cells([]byte(tt.pod)), podNow)).Array()
			got := [3]string{row[1].String(), row[2].String(), row[3].String()}
			if want := [3]string{tt.ready, tt.status, tt.restarts}; got != want {
				t.Errorf("Ready, Status, Restarts = %q, want %q", got, want)
			}
			if age := row[4].String(); age != "10m" {
				t.Errorf("Age = %q, want 10m", age)
			}
		})
	}
}

// TestPodWideColumns covers IP, Node, Nominated Node and Readiness Gates.
func TestPodWideColumns(t *testing.T) {
	tests := []struct {
		name string
		pod  string
		want string // the four wide cells
	}{
		{"none", podJSON("", oneContainer, `{"phase":"Pending"}`),
			`"\u003cnone\u003e","\u003cnone\u003e","\u003cnone\u003e","\u003cnone\u003e"`},
		{"set", podJSON("", `{"nodeName":"n1","readinessGates":[{"conditionType":"a"},{"conditionType":"b"}],"containers":[]}`,
			`{"phase":"Running","podIPs":[{"ip":"10.0.0.7"},{"ip":"fd00::7"}],"nominatedNodeName":"n2",`+
				`"conditions":[{"type":"a","status":"True"},{"type":"b","status":"False"}]}`),
			`"10.0.0.7","n1","n2","1/2"`},
	}
	p := Lookup("pods")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			for i, c := range p.Cells([]byte(tt.pod)).Cells()[5:] {
				if i > 0 {
					got = append(got, ',')
				}
				got = append(got, c.JSON...)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
