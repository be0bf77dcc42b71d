package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/litek8s/litek8s/internal/kubeletclient"
)

// pods/log: GET streams the kubelet's /containerLogs as text/plain,
// flushed as it arrives (follow ends when the client goes away), as
// kube's LogREST and LocationStreamer do; or over a WebSocket when the
// request asks for one (connect_logws.go).

var podLogGR = schema.GroupResource{Resource: "pods/log"}

// podLog serves GET …/pods/{name}/log.
func (s *Server) podLog(w http.ResponseWriter, r *http.Request, q *request) error {
	o, err := parseLogOptions(r.URL.Query())
	if err != nil {
		return err
	}
	if errs := validateLogOptions(o); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, q.name, errs)
	}
	pod, err := getTyped[corev1.Pod](r.Context(), s, q.res, q.namespace, q.name)
	if err != nil {
		return err
	}
	container, err := podContainer(pod, o.Container)
	if err != nil {
		return err
	}
	ws := isLogWebSocket(r)
	if ws {
		if err := checkLogWebSocket(r); err != nil {
			return err
		}
	}
	if pod.Spec.NodeName == "" { // kube: an empty stream
		if ws {
			return serveLogWebSocket(w, r, http.NoBody, func() {})
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		return nil
	}
	base, err := s.kubeletOf(r.Context(), pod)
	if err != nil {
		return err
	}
	// The kubelet's stream ends with the request, or with the WebSocket
	// (a hijacked connection's request context outlives its client).
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	u := kubeletclient.At(base, kubeletclient.LogPath(pod.Namespace, pod.Name, container, o))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := s.cfg.Kubelets.KubeletTransport(o.InsecureSkipTLSVerifyBackend).RoundTrip(req)
	if err != nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach the kubelet of node %s: %v", pod.Spec.NodeName, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return apierrors.NewGenericServerResponse(resp.StatusCode, "", podLogGR, q.name, string(body), 0, false)
	}
	if ws {
		if err := serveLogWebSocket(w, r, resp.Body, cancel); err != nil {
			s.log.Debug("pods/log over WebSocket ended", "pod", q.namespace+"/"+q.name, "err", err)
		}
		return nil
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil // the client went away
			}
			if o.Follow {
				rc.Flush()
			}
		}
		if err != nil {
			return nil // the end of the log, or of the client
		}
	}
}

// parseLogOptions reads PodLogOptions from the query as kube's parameter
// codec does (400 when a value does not parse).
func parseLogOptions(qv url.Values) (*corev1.PodLogOptions, error) {
	o := &corev1.PodLogOptions{Container: qv.Get("container"), Follow: queryBool(qv, "follow"),
		Previous: queryBool(qv, "previous"), Timestamps: queryBool(qv, "timestamps"),
		InsecureSkipTLSVerifyBackend: queryBool(qv, "insecureSkipTLSVerifyBackend")}
	for _, p := range []struct {
		name string
		dst  **int64
	}{{"sinceSeconds", &o.SinceSeconds}, {"tailLines", &o.TailLines}, {"limitBytes", &o.LimitBytes}} {
		v := qv.Get(p.name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: %v", p.name, err))
		}
		*p.dst = &n
	}
	if v := qv.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("sinceTime: %v", err))
		}
		mt := metav1.NewTime(t)
		o.SinceTime = &mt
	}
	if v, ok := qv["stream"]; ok && len(v) > 0 {
		o.Stream = &v[0]
	}
	return o, nil
}

// validateLogOptions is kube's ValidatePodLogOptions with
// PodLogsQuerySplitStreams off (its default in 1.37).
func validateLogOptions(o *corev1.PodLogOptions) field.ErrorList {
	var errs field.ErrorList
	if o.TailLines != nil && *o.TailLines < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), *o.TailLines, "must be greater than or equal to 0"))
	}
	if o.LimitBytes != nil && *o.LimitBytes < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *o.LimitBytes, "must be greater than 0"))
	}
	switch {
	case o.SinceSeconds != nil && o.SinceTime != nil:
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *o.SinceSeconds, "must be greater than 0"))
	}
	if o.Stream != nil {
		errs = append(errs, field.Forbidden(field.NewPath("stream"), "may not be specified"))
	}
	return errs
}
