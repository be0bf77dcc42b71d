package aggregator

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AuthenticationConfigMap is kube-system/extension-apiserver-authentication
// as kube-apiserver publishes it: the client CA aggregated servers trust
// for client certificates, and the front-proxy (requestheader) CA, the
// allowed front-proxy names and the headers the user comes in.
// Aggregated servers read it (the Role extension-apiserver-authentication-reader
// lets them) to authenticate what the aggregator proxies.
func AuthenticationConfigMap(clientCA, requestHeaderCA []byte, allowedNames []string) *corev1.ConfigMap {
	list := func(v ...string) string {
		b, _ := json.Marshal(v) // a []string always marshals
		return string(b)
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "extension-apiserver-authentication", Namespace: metav1.NamespaceSystem},
		Data: map[string]string{
			"client-ca-file":                     string(clientCA),
			"requestheader-client-ca-file":       string(requestHeaderCA),
			"requestheader-allowed-names":        list(allowedNames...),
			"requestheader-username-headers":     list("X-Remote-User"),
			"requestheader-uid-headers":          list("X-Remote-Uid"),
			"requestheader-group-headers":        list("X-Remote-Group"),
			"requestheader-extra-headers-prefix": list("X-Remote-Extra-"),
		},
	}
}
