package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A review has no table form: kube answers 406 when a Table is the only
// representation asked for, and the review as JSON otherwise.
func TestReviewTableNotAcceptable(t *testing.T) {
	s := newReadServer(t, nil)
	const path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	const body = `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",` +
		`"spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`
	code, _, b := s.do(t, http.MethodPost, path, "application/json;as=Table;v=v1;g=meta.k8s.io", body)
	var st metav1.Status
	if code != http.StatusNotAcceptable || json.Unmarshal(b, &st) != nil || st.Reason != metav1.StatusReasonNotAcceptable {
		t.Fatalf("POST %s as Table: %d %s, want 406 NotAcceptable", path, code, b)
	}
	code, _, b = s.do(t, http.MethodPost, path, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json", body)
	var r authorizationv1.SelfSubjectAccessReview
	if code != http.StatusCreated || json.Unmarshal(b, &r) != nil || r.Kind != "SelfSubjectAccessReview" {
		t.Fatalf("POST %s as Table or JSON: %d %s, want 201 with the review", path, code, b)
	}
}
