package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Namespaces of the scenarios: the list scenarios read listNS only, so
// that the writes of the others never change what they serve.
const (
	listNS   = "bench-list"   // the -objects ConfigMaps
	writeNS  = "bench-write"  // create, patch, update
	watchNS  = "bench-watch"  // watch_latency
	fanoutNS = "bench-fanout" // watch_fanout
)

// groups is how many label groups the list objects are spread over: the
// selector bench-group=g0 matches 1/groups of them.
const groups = 10

// objectBytes is the size of each ConfigMap's stored JSON, as in issue 4's
// measurements of kube-apiserver; calibrate pads the ConfigMaps to it.
const objectBytes = 700

// shape is what the ConfigMaps api_load writes look like: a payload that
// brings the stored JSON to objectBytes with what the server adds (uid,
// resourceVersion, creationTimestamp, managedFields).
type shape struct {
	payload string
}

func newShape(n int) shape {
	return shape{payload: strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz", max(n, 0)/36+1)[:max(n, 0)]}
}

// calibrate creates two probe ConfigMaps in writeNS and returns the shape
// with which a list object (cm-NNNNNN in listNS) is objectBytes long as a
// GET returns it, and that length. (List items omit kind and apiVersion,
// 36 bytes fewer.)
func calibrate(ctx context.Context, ep *endpoint) (shape, int, error) {
	guess := newShape(400)
	var buf bytes.Buffer
	probe := func(name string, s shape) (int, error) {
		c := call{method: http.MethodPost, path: cmPath(writeNS), want: http.StatusCreated,
			body: s.configMap(writeNS, name, "", "g0", "")}
		if err := ep.do(ctx, c, &buf); err != nil {
			return 0, fmt.Errorf("calibrate: %w", err)
		}
		_, err := checkObject(buf.Bytes(), writeNS, name)
		// as long as cm-NNNNNN, and counted as if in listNS
		return len(bytes.TrimSpace(buf.Bytes())) - len(writeNS) + len(listNS), err
	}
	n, err := probe("sz-000000", guess)
	if err != nil {
		return shape{}, 0, err
	}
	s := newShape(len(guess.payload) + objectBytes - n)
	n, err = probe("sz-000001", s)
	return s, n, err
}

type configMap struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   objectMeta        `json:"metadata"`
	Data       map[string]string `json:"data"`
}

type objectMeta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
}

// configMap is the body of a create or update: the ConfigMap ns/name
// (at resourceVersion rv when set), labelled bench-group=group when set,
// with data.n = n when set.
func (s shape) configMap(ns, name, rv, group, n string) []byte {
	cm := configMap{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: objectMeta{Name: name, Namespace: ns, ResourceVersion: rv},
		Data:     map[string]string{"payload": s.payload}}
	if group != "" {
		cm.Metadata.Labels = map[string]string{"bench-group": group}
	}
	if n != "" {
		cm.Data["n"] = n
	}
	b, err := json.Marshal(&cm)
	if err != nil {
		panic(err) // a configMap always marshals
	}
	return b
}

// decodedMeta is what a write or get response is checked against.
type decodedMeta struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name            string `json:"name"`
		Namespace       string `json:"namespace"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

// checkObject decodes an object response and checks that it is the
// ConfigMap ns/name with a resourceVersion, which it returns.
func checkObject(b []byte, ns, name string) (string, error) {
	var m decodedMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("decoding %s/%s: %w", ns, name, err)
	}
	if m.Kind != "ConfigMap" || m.Metadata.Name != name || m.Metadata.Namespace != ns || m.Metadata.ResourceVersion == "" {
		return "", fmt.Errorf("got kind %q %s/%s rv %q, want ConfigMap %s/%s with a resourceVersion",
			m.Kind, m.Metadata.Namespace, m.Metadata.Name, m.Metadata.ResourceVersion, ns, name)
	}
	return m.Metadata.ResourceVersion, nil
}

func cmPath(ns string) string { return "/api/v1/namespaces/" + ns + "/configmaps" }

// rootCAName is the ConfigMap that the root CA publisher (litek8s's, as
// kube's) puts in every namespace: the scenarios' namespaces hold it
// besides what api_load writes, as they would on kube.
const rootCAName = "kube-root-ca.crt"

// listed is how many ConfigMaps a whole list of listNS holds: the -objects
// ones and kube-root-ca.crt.
func listed(objects int) int { return objects + 1 }

// createNamespaces creates the scenarios' namespaces and waits for their
// kube-root-ca.crt: the scenarios' lists and watches start once the
// publisher has written it.
func createNamespaces(ctx context.Context, ep *endpoint, names ...string) error {
	for _, ns := range names {
		body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
		c := call{method: http.MethodPost, path: "/api/v1/namespaces", body: body, want: http.StatusCreated}
		if err := ep.do(ctx, c, nil); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	for _, ns := range names {
		err := poll(ctx, 30*time.Second, func() error {
			return ep.do(ctx, call{method: http.MethodGet, path: cmPath(ns) + "/" + rootCAName}, nil)
		})
		if err != nil {
			return fmt.Errorf("namespace %s: no %s: %w", ns, rootCAName, err)
		}
	}
	return nil
}

// createRetrying creates the list object name, retrying while the
// cluster is unavailable (an election under load): fill is set-up, not a
// measurement. A retried create may find the object created by an attempt
// whose answer was lost (409), which it then reads back.
func createRetrying(ctx context.Context, ep *endpoint, s shape, name, group string, buf *bytes.Buffer) error {
	c := call{method: http.MethodPost, path: cmPath(listNS), want: http.StatusCreated,
		body: s.configMap(listNS, name, "", group, "")}
	var err error
	for attempt := range 20 {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		if err = ep.do(ctx, c, buf); err == nil {
			_, err = checkObject(buf.Bytes(), listNS, name)
			return err
		}
		var se *statusError
		switch {
		case !errors.As(err, &se):
			if ctx.Err() != nil {
				return err
			}
			continue // connection trouble
		case se.code == http.StatusConflict && attempt > 0:
			if err := ep.do(ctx, call{method: http.MethodGet, path: cmPath(listNS) + "/" + name}, buf); err != nil {
				return err
			}
			_, err = checkObject(buf.Bytes(), listNS, name)
			return err
		case se.code == http.StatusServiceUnavailable || se.code == http.StatusGatewayTimeout ||
			se.code == http.StatusTooManyRequests || se.code == http.StatusInternalServerError ||
			se.code == http.StatusBadGateway:
			continue
		default:
			return err
		}
	}
	return fmt.Errorf("still failing after 20 attempts: %w", err)
}

// fill creates n ConfigMaps cm-000000… in listNS from clients concurrent
// clients, labelled over groups, and returns how long it took.
func fill(ctx context.Context, ep *endpoint, s shape, n, clients int, progress io.Writer) (time.Duration, error) {
	var next, done atomic.Int64
	g := newGroup(ctx)
	start := time.Now()
	for range min(clients, max(n, 1)) {
		g.Go(func(ctx context.Context) error {
			var buf bytes.Buffer
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return nil
				}
				if err := createRetrying(ctx, ep, s, fmt.Sprintf("cm-%06d", i), fmt.Sprintf("g%d", i%groups), &buf); err != nil {
					return fmt.Errorf("fill: %w", err)
				}
				done.Add(1)
			}
		})
	}
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				fmt.Fprintf(progress, "fill: %d/%d ConfigMaps after %v\n", done.Load(), n, time.Since(start).Round(time.Second))
			}
		}
	}()
	err := g.Wait()
	close(stop)
	<-ticked
	return time.Since(start), err
}
