package crdconversion

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// failed is the error kube answers when a conversion fails: a 500 Status
// without a reason whose message names the converted objects' kind, as
// "conversion webhook for stable.example.com/v1, Kind=CronTab failed: …".
func failed(gvk schema.GroupVersionKind, format string, args ...any) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Message: fmt.Sprintf("conversion webhook for %v ", gvk) + fmt.Sprintf(format, args...)}}
}
