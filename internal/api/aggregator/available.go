package aggregator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/litek8s/litek8s/internal/api/svcclient"
)

// Check is kube's available controller's verdict on svc: its Available
// condition's status, reason and message. A Local APIService is always
// available; one with a service when the service resolves to a ready
// endpoint and /apis/<group>/<version> answers 200 within 5 s.
func (a *Aggregator) Check(ctx context.Context, svc *apiregv1.APIService) (apiregv1.ConditionStatus, string, string) {
	ref := svc.Spec.Service
	if ref == nil {
		return apiregv1.ConditionTrue, "Local", "Local APIServices are always available"
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	cl, req, err := a.clients.Request(ctx, Target(svc), http.MethodGet, "")
	if re := (*svcclient.ResolveError)(nil); errors.As(err, &re) {
		port := int32(443)
		if ref.Port != nil {
			port = *ref.Port
		}
		switch re.Reason {
		case svcclient.ReasonServiceNotFound:
			return apiregv1.ConditionFalse, re.Reason, fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace)
		case svcclient.ReasonServicePortError:
			return apiregv1.ConditionFalse, re.Reason, fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port)
		default:
			return apiregv1.ConditionFalse, re.Reason, fmt.Sprintf("endpoints for service/%s in %q have no addresses with port %d", ref.Name, ref.Namespace, port)
		}
	}
	if err == nil {
		req.URL.Path = "/apis/" + svc.Spec.Group + "/" + svc.Spec.Version
		req.Header.Set("X-Remote-User", "system:kube-aggregator")
		req.Header.Add("X-Remote-Group", "system:masters")
		var resp *http.Response
		if resp, err = cl.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("bad status from %s: %d", req.URL, resp.StatusCode)
			}
		}
	}
	if err != nil {
		return apiregv1.ConditionFalse, "FailedDiscoveryCheck", fmt.Sprintf("failing or missing response from %s: %v", "https://"+ref.Name+"."+ref.Namespace+".svc/apis/"+svc.Spec.Group+"/"+svc.Spec.Version, err)
	}
	return apiregv1.ConditionTrue, "Passed", "all checks passed"
}
