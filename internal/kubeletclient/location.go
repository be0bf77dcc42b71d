package kubeletclient

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The kubelet's paths for the pod subresources, with the query kube
// builds from the parsed options (pkg/registry/core/pod's LogLocation,
// streamLocation and PortForwardLocation): only what the kubelet reads,
// in a canonical form.

// LogPath is the kubelet's /containerLogs/<ns>/<pod>/<container> with o.
func LogPath(namespace, pod, container string, o *corev1.PodLogOptions) *url.URL {
	q := url.Values{}
	if o.Follow {
		q.Add("follow", "true")
	}
	if o.Previous {
		q.Add("previous", "true")
	}
	if o.Timestamps {
		q.Add("timestamps", "true")
	}
	if o.SinceSeconds != nil {
		q.Add("sinceSeconds", strconv.FormatInt(*o.SinceSeconds, 10))
	}
	if o.SinceTime != nil {
		q.Add("sinceTime", o.SinceTime.UTC().Format(time.RFC3339))
	}
	if o.TailLines != nil {
		q.Add("tailLines", strconv.FormatInt(*o.TailLines, 10))
	}
	if o.LimitBytes != nil {
		q.Add("limitBytes", strconv.FormatInt(*o.LimitBytes, 10))
	}
	if o.Stream != nil {
		q.Add("stream", *o.Stream)
	}
	return &url.URL{Path: podPath("containerLogs", namespace, pod, container), RawQuery: q.Encode()}
}

// ExecPath is the kubelet's /exec/<ns>/<pod>/<container> with o.
func ExecPath(namespace, pod, container string, o *corev1.PodExecOptions) *url.URL {
	q := streamQuery(o.Stdin, o.Stdout, o.Stderr, o.TTY)
	for _, c := range o.Command {
		q.Add("command", c)
	}
	return &url.URL{Path: podPath("exec", namespace, pod, container), RawQuery: q.Encode()}
}

// AttachPath is the kubelet's /attach/<ns>/<pod>/<container> with o.
func AttachPath(namespace, pod, container string, o *corev1.PodAttachOptions) *url.URL {
	q := streamQuery(o.Stdin, o.Stdout, o.Stderr, o.TTY)
	return &url.URL{Path: podPath("attach", namespace, pod, container), RawQuery: q.Encode()}
}

// PortForwardPath is the kubelet's /portForward/<ns>/<pod> with o's ports
// (the WebSocket protocol names them in the query; SPDY in stream headers).
func PortForwardPath(namespace, pod string, o *corev1.PodPortForwardOptions) *url.URL {
	q := url.Values{}
	if len(o.Ports) > 0 {
		ports := make([]string, len(o.Ports))
		for i, p := range o.Ports {
			ports[i] = strconv.Itoa(int(p))
		}
		q.Add("port", strings.Join(ports, ","))
	}
	return &url.URL{Path: podPath("portForward", namespace, pod), RawQuery: q.Encode()}
}

// streamQuery is kube's streamParams for exec and attach.
func streamQuery(stdin, stdout, stderr, tty bool) url.Values {
	q := url.Values{}
	for _, p := range []struct {
		name string
		on   bool
	}{{corev1.ExecStdinParam, stdin}, {corev1.ExecStdoutParam, stdout}, {corev1.ExecStderrParam, stderr},
		{corev1.ExecTTYParam, tty}} {
		if p.on {
			q.Add(p.name, "1")
		}
	}
	return q
}

func podPath(kind string, segs ...string) string {
	return fmt.Sprintf("/%s/%s", kind, strings.Join(segs, "/"))
}

// At joins base (a kubelet's NodeURL, or a pod's) with rel's path and
// query.
func At(base *url.URL, rel *url.URL) *url.URL {
	u := *base
	u.Path, u.RawPath, u.RawQuery = rel.Path, rel.RawPath, rel.RawQuery
	return &u
}
