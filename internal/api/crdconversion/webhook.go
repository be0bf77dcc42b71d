package crdconversion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/litek8s/litek8s/internal/api/svcclient"
)

// Timeout is how long a conversion call may take: kube's fixed 30s.
const Timeout = 30 * time.Second

// maxResponse bounds a ConversionReview response read into memory.
const maxResponse = 256 << 20

// Webhook converts the objects of one CRD through its conversion webhook.
type Webhook struct {
	clients *svcclient.Clients
	target  svcclient.Target
	group   string
	kind    string
	// review is the ConversionReview version sent ("v1" or "v1beta1").
	review string
}

// New returns the converter of crd, nil when its strategy is not Webhook
// (or the CRD names no ConversionReview version kube sends, which
// ValidateConversion refuses).
func New(crd *apiextv1.CustomResourceDefinition, clients *svcclient.Clients) *Webhook {
	c := crd.Spec.Conversion
	if c == nil || c.Strategy != apiextv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil {
		return nil
	}
	review := reviewVersion(c.Webhook.ConversionReviewVersions)
	if review == "" {
		return nil
	}
	cc := c.Webhook.ClientConfig
	t := svcclient.Target{CABundle: bytes.TrimSpace(cc.CABundle)}
	switch {
	case cc.URL != nil:
		t.URL = *cc.URL
	case cc.Service != nil:
		ref := &svcclient.ServiceRef{Namespace: cc.Service.Namespace, Name: cc.Service.Name, Port: 443}
		if cc.Service.Port != nil {
			ref.Port = *cc.Service.Port
		}
		if cc.Service.Path != nil {
			ref.Path = *cc.Service.Path
		}
		t.Service = ref
	default:
		return nil
	}
	return &Webhook{clients: clients, target: t, group: crd.Spec.Group, kind: crd.Spec.Names.Kind, review: review}
}

// review is a ConversionReview as sent and received (v1 and v1beta1
// have the same shape).
type review struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Request    *reviewRequest  `json:"request,omitempty"`
	Response   *reviewResponse `json:"response,omitempty"`
}

type reviewRequest struct {
	UID               types.UID         `json:"uid"`
	DesiredAPIVersion string            `json:"desiredAPIVersion"`
	Objects           []json.RawMessage `json:"objects"`
}

type reviewResponse struct {
	UID              types.UID         `json:"uid"`
	ConvertedObjects []json.RawMessage `json:"convertedObjects"`
	Result           metav1.Status     `json:"result"`
}

// Convert returns objs (JSON objects of the CRD's kind) in version: the
// ones already in it as they are, the others converted by one call of the
// webhook, as JSON with sorted keys and their original metadata except
// labels and annotations. An error is kube's 500 "conversion webhook for
// <group/version, Kind=kind> failed: …".
func (w *Webhook) Convert(ctx context.Context, objs [][]byte, version string) ([][]byte, error) {
	desired := schema.GroupVersion{Group: w.group, Version: version}.String()
	var in []*unstructured.Unstructured
	var at []int // index in objs of each of in
	for i, raw := range objs {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("crdconversion: stored object %d: %w", i, err)
		}
		if u.GetAPIVersion() != desired {
			in, at = append(in, u), append(at, i)
		}
	}
	if len(in) == 0 {
		return objs, nil
	}
	gvk := in[0].GroupVersionKind()
	converted, err := w.call(ctx, objs, at, desired)
	if err != nil {
		return nil, failed(gvk, "failed: %v", err)
	}
	if len(converted) != len(in) {
		return nil, failed(gvk, "returned %d objects, expected %d", len(converted), len(in))
	}
	out := append([][]byte(nil), objs...)
	for j, raw := range converted {
		b, err := checked(in[j], raw, desired)
		if err != nil {
			return nil, failed(gvk, "returned invalid converted object at index %v: %v", j, err)
		}
		out[at[j]] = b
	}
	return out, nil
}

// call sends the objects objs[at] to the webhook and returns its
// convertedObjects.
func (w *Webhook) call(ctx context.Context, objs [][]byte, at []int, desired string) ([]json.RawMessage, error) {
	uid := uuid.NewUUID()
	req := review{APIVersion: apiextv1.SchemeGroupVersion.Group + "/" + w.review, Kind: "ConversionReview",
		Request: &reviewRequest{UID: uid, DesiredAPIVersion: desired}}
	for _, i := range at {
		req.Request.Objects = append(req.Request.Objects, objs[i])
	}
	body, err := json.Marshal(&req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cl, hr, err := w.clients.Request(ctx, w.target, http.MethodPost, "")
	if err != nil {
		return nil, err
	}
	hr.URL.RawQuery = "timeout=" + Timeout.String() // as kube's webhook client sends it
	hr.Body = io.NopCloser(bytes.NewReader(body))
	hr.ContentLength = int64(len(body))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	resp, err := cl.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("the server responded with the status code %d but did not return more information", resp.StatusCode)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("0-length response with status code: %d and content type: %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var res review
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, err
	}
	return responseObjects(w.review, uid, &res)
}

// responseObjects checks a response as kube does: a v1 response must be a
// v1 ConversionReview echoing the request's uid; both versions need a
// response whose result is Success.
func responseObjects(version string, uid types.UID, res *review) ([]json.RawMessage, error) {
	if version == "v1" {
		want := apiextv1.SchemeGroupVersion.WithKind("ConversionReview")
		if got := schema.FromAPIVersionAndKind(res.APIVersion, res.Kind); got != want {
			return nil, fmt.Errorf("expected webhook response of %v, got %v", want, got)
		}
	}
	if res.Response == nil {
		return nil, errors.New("no response provided")
	}
	if version == "v1" && res.Response.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, res.Response.UID)
	}
	if r := res.Response.Result; r.Status != metav1.StatusSuccess {
		if r.Message != "" {
			return nil, errors.New(r.Message)
		}
		return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", r.Status)
	}
	return res.Response.ConvertedObjects, nil
}
