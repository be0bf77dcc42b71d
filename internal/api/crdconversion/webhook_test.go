package crdconversion

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/litek8s/litek8s/internal/api/svcclient"
)

// A webhook's answer is checked as kube checks it; what it may change of
// the metadata is labels and annotations only.
func TestConvertChecksTheResponse(t *testing.T) {
	for _, tc := range []struct {
		name string
		// edit changes the review the test webhook answers.
		edit func(r map[string]any, objs []map[string]any)
		want string // "" = success
	}{
		{"converted", func(map[string]any, []map[string]any) {}, ""},
		{"labels changed", func(_ map[string]any, objs []map[string]any) {
			objs[0]["metadata"].(map[string]any)["labels"] = map[string]any{"converted": "yes"}
			objs[0]["metadata"].(map[string]any)["resourceVersion"] = "999" // restored
		}, ""},
		{"uid", func(r map[string]any, _ []map[string]any) { r["uid"] = "other" },
			`conversion webhook for ex.com/v1, Kind=Thing failed: expected response.uid=`},
		{"count", func(r map[string]any, objs []map[string]any) { r["convertedObjects"] = []any{objs[0]} },
			`conversion webhook for ex.com/v1, Kind=Thing returned 1 objects, expected 2`},
		{"name", func(_ map[string]any, objs []map[string]any) { objs[1]["metadata"].(map[string]any)["name"] = "x" },
			`conversion webhook for ex.com/v1, Kind=Thing returned invalid converted object at index 1: must have the same name: b != x`},
		{"apiVersion", func(_ map[string]any, objs []map[string]any) { objs[0]["apiVersion"] = "ex.com/v1" },
			`returned invalid converted object at index 0: invalid groupVersion (expected ex.com/v2, received ex.com/v1)`},
		{"bad label", func(_ map[string]any, objs []map[string]any) {
			objs[0]["metadata"].(map[string]any)["labels"] = map[string]any{"a b": "c"}
		}, `metadata.labels: Invalid value: "a b"`},
		{"failure", func(r map[string]any, _ []map[string]any) {
			r["result"] = map[string]any{"status": "Failure", "message": "cannot convert"}
		}, `conversion webhook for ex.com/v1, Kind=Thing failed: cannot convert`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var rev apiextv1.ConversionReview
				json.NewDecoder(r.Body).Decode(&rev)
				var objs []map[string]any
				for _, o := range rev.Request.Objects {
					var m map[string]any
					json.Unmarshal(o.Raw, &m)
					m["apiVersion"] = rev.Request.DesiredAPIVersion
					m["spec"] = map[string]any{"converted": true}
					objs = append(objs, m)
				}
				resp := map[string]any{"uid": string(rev.Request.UID), "result": map[string]any{"status": "Success"}}
				conv := make([]any, len(objs))
				for i := range objs {
					conv[i] = objs[i]
				}
				resp["convertedObjects"] = conv
				tc.edit(resp, objs)
				json.NewEncoder(w).Encode(map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": resp})
			}))
			defer srv.Close()
			clients := svcclient.New(nil, nil)
			defer clients.Close()
			url := srv.URL + "/convert"
			crd := &apiextv1.CustomResourceDefinition{Spec: apiextv1.CustomResourceDefinitionSpec{Group: "ex.com",
				Names: apiextv1.CustomResourceDefinitionNames{Kind: "Thing"},
				Conversion: &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig:             &apiextv1.WebhookClientConfig{URL: &url, CABundle: certPEM(srv)}}}}}
			w := New(crd, clients)
			in := [][]byte{
				[]byte(`{"apiVersion":"ex.com/v1","kind":"Thing","metadata":{"name":"a","resourceVersion":"5","uid":"u1"},"spec":{"old":1}}`),
				[]byte(`{"apiVersion":"ex.com/v1","kind":"Thing","metadata":{"name":"b","uid":"u2"},"spec":{"old":2}}`),
				[]byte(`{"apiVersion":"ex.com/v2","kind":"Thing","metadata":{"name":"c","uid":"u3"},"spec":{"new":3}}`),
			}
			out, err := w.Convert(context.Background(), in, "v2")
			if tc.want != "" {
				if se, ok := err.(*apierrors.StatusError); !ok || se.ErrStatus.Code != 500 || !strings.Contains(se.ErrStatus.Message, tc.want) {
					t.Fatalf("got %#v, want a 500 with %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if &out[2][0] != &in[2][0] {
				t.Error("an object already in v2 was sent or copied")
			}
			var u unstructured.Unstructured
			if err := u.UnmarshalJSON(out[0]); err != nil {
				t.Fatal(err)
			}
			if u.GetAPIVersion() != "ex.com/v2" || u.GetResourceVersion() != "5" || u.GetUID() != "u1" ||
				!runtimeEqual(u.Object["spec"], map[string]any{"converted": true}) {
				t.Fatalf("converted: %s", out[0])
			}
			if tc.name == "labels changed" && u.GetLabels()["converted"] != "yes" {
				t.Fatalf("labels the webhook set are lost: %s", out[0])
			}
			if !strings.HasPrefix(string(out[1]), `{"apiVersion":"ex.com/v2","kind":"Thing","metadata":{`) {
				t.Fatalf("keys not sorted: %s", out[1])
			}
		})
	}
}

func runtimeEqual(a, b any) bool {
	x, _ := json.Marshal(runtime.DeepCopyJSONValue(a))
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
