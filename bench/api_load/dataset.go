package main

import (
	"bytes"
	"context"
	"encoding/json"
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

// payloadLen pads each ConfigMap so that its stored JSON (with the
// metadata the server adds: uid, resourceVersion, creationTimestamp) is
// about 700 bytes, as in issue 4's measurements of kube-apiserver.
const payloadLen = 478

var payload = strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz", payloadLen/36+1)[:payloadLen]

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

// configMapJSON is the body of a create or update.
func configMapJSON(ns, name, rv, group, n string) []byte {
	cm := configMap{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: objectMeta{Name: name, Namespace: ns, ResourceVersion: rv},
		Data:     map[string]string{"payload": payload}}
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

// createNamespaces creates the scenarios' namespaces.
func createNamespaces(ctx context.Context, ep *endpoint, names ...string) error {
	for _, ns := range names {
		body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
		c := call{method: http.MethodPost, path: "/api/v1/namespaces", body: body, want: http.StatusCreated}
		if err := ep.do(ctx, c, nil); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	return nil
}

// fill creates n ConfigMaps cm-000000… in listNS from clients concurrent
// clients, labelled over groups, and returns how long it took.
func fill(ctx context.Context, ep *endpoint, n, clients int, progress io.Writer) (time.Duration, error) {
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
				name := fmt.Sprintf("cm-%06d", i)
				c := call{method: http.MethodPost, path: cmPath(listNS), want: http.StatusCreated,
					body: configMapJSON(listNS, name, "", fmt.Sprintf("g%d", i%groups), "")}
				if err := ep.do(ctx, c, &buf); err != nil {
					return fmt.Errorf("fill: %w", err)
				}
				if _, err := checkObject(buf.Bytes(), listNS, name); err != nil {
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
