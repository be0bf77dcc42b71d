package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// discoveryTTL is how long a fetched discovery document is served before
// it is fetched again (kube's aggregator refreshes about every minute).
const discoveryTTL = 30 * time.Second

// GroupVersionResources is what an aggregated group/version serves, from
// its server's own discovery (/apis/<group>/<version>).
type GroupVersionResources struct {
	Group, Version string
	Resources      []metav1.APIResource
}

// discoveryCache holds the last fetched documents; mu protects it and
// serialises fetches.
type discoveryCache struct {
	mu    sync.Mutex
	rev   uint64 // the APIServices table it was fetched for
	at    time.Time
	gen   uint64
	items []GroupVersionResources
}

// Discovery returns the resources of every aggregated group/version whose
// server answered, and a generation that changes when they do. It fetches
// again (5 s each, concurrently) when the APIServices changed or the
// documents are older than discoveryTTL.
func (a *Aggregator) Discovery(ctx context.Context) (uint64, []GroupVersionResources, error) {
	t, err := a.current(ctx)
	if err != nil {
		return 0, nil, err
	}
	d := &a.disco
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rev == t.rev && time.Since(d.at) < discoveryTTL {
		return d.gen, d.items, nil
	}
	if len(t.byGV) == 0 && len(d.items) == 0 {
		d.rev, d.at = t.rev, time.Now()
		return d.gen, nil, nil
	}
	items := a.fetchAll(ctx, t)
	if !reflect.DeepEqual(items, d.items) {
		d.gen++
		d.items = items
	}
	d.rev, d.at = t.rev, time.Now()
	return d.gen, d.items, nil
}

func (a *Aggregator) fetchAll(ctx context.Context, t *table) []GroupVersionResources {
	var (
		mu    sync.Mutex
		wg    sync.WaitGroup
		items []GroupVersionResources
	)
	for gv, svc := range t.byGV {
		if !Available(svc) {
			continue
		}
		wg.Go(func() {
			rs, err := a.fetch(ctx, svc)
			if err != nil {
				a.cfg.Logger.Info("aggregated discovery failed", "groupVersion", gv, "err", err)
				return
			}
			mu.Lock()
			items = append(items, GroupVersionResources{Group: svc.Spec.Group, Version: svc.Spec.Version, Resources: rs})
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortFunc(items, func(x, y GroupVersionResources) int {
		return strings.Compare(x.Group+"/"+x.Version, y.Group+"/"+y.Version)
	})
	return items
}

// fetch GETs /apis/<group>/<version> from svc's server as the aggregator
// itself (user system:kube-aggregator, as kube's discovery does).
func (a *Aggregator) fetch(ctx context.Context, svc *apiregv1.APIService) ([]metav1.APIResource, error) {
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	cl, req, err := a.clients.Request(ctx, Target(svc), http.MethodGet, "")
	if err != nil {
		return nil, err
	}
	req.URL.Path = "/apis/" + svc.Spec.Group + "/" + svc.Spec.Version
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Remote-User", "system:kube-aggregator")
	req.Header.Add("X-Remote-Group", "system:masters")
	resp, err := cl.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %d", req.URL.Path, resp.StatusCode)
	}
	var l metav1.APIResourceList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", req.URL.Path, err)
	}
	return l.APIResources, nil
}
