package crdconversion

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks of a webhook client config, worded as kube's
// k8s.io/apiserver/pkg/util/webhook validation words them (that package
// pulls in the apiserver's egress selector, gRPC and global feature
// gates).

func validateURL(p *field.Path, raw string) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(p, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(p, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

func validateService(p *field.Path, namespace, name string, path *string, port int32) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	}
	if msgs := validation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(p.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if path == nil || *path == "" || *path == "/" {
		return errs
	}
	pp := p.Child("path")
	if *path == "//" {
		return append(errs, field.Invalid(pp, *path, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(*path, "/") {
		errs = append(errs, field.Invalid(pp, *path, "must start with a '/'"))
	}
	rest := strings.TrimSuffix((*path)[1:], "/")
	for i, seg := range strings.Split(rest, "/") {
		if seg == "" {
			errs = append(errs, field.Invalid(pp, *path, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(seg) {
			errs = append(errs, field.Invalid(pp, *path, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}

func validateCABundle(p *field.Path, ca []byte) field.ErrorList {
	if !x509.NewCertPool().AppendCertsFromPEM(ca) {
		return field.ErrorList{field.Invalid(p, ca, "unable to load root certificates: unable to parse bytes as PEM block")}
	}
	return nil
}
