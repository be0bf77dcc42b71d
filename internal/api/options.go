package api

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// writeOptions are the query options of a create, update or patch
// (metav1.CreateOptions, UpdateOptions, PatchOptions), validated the way
// kube-apiserver validates them.
type writeOptions struct {
	dryRun bool
	// manager is ?fieldManager, or else the User-Agent up to its first '/'
	// (kube's managerOrUserAgent); explicitManager is ?fieldManager alone.
	manager, explicitManager string
	validation               fieldValidation
	force                    bool // apply patches only
}

// optionsKind names the options type in a 422 (details.kind, group meta.k8s.io).
func invalidOptions(kind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}

func parseCreateOptions(r *http.Request) (*writeOptions, error) {
	var o metav1.CreateOptions
	if err := metainternalscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &o); err != nil {
		return nil, badRequest("%v", err)
	}
	if errs := metavalidation.ValidateCreateOptions(&o); len(errs) > 0 {
		return nil, invalidOptions("CreateOptions", errs)
	}
	return newWriteOptions(r, o.DryRun, o.FieldManager, o.FieldValidation, nil), nil
}

func parseUpdateOptions(r *http.Request) (*writeOptions, error) {
	var o metav1.UpdateOptions
	if err := metainternalscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &o); err != nil {
		return nil, badRequest("%v", err)
	}
	if errs := metavalidation.ValidateUpdateOptions(&o); len(errs) > 0 {
		return nil, invalidOptions("UpdateOptions", errs)
	}
	return newWriteOptions(r, o.DryRun, o.FieldManager, o.FieldValidation, nil), nil
}

func parsePatchOptions(r *http.Request, pt types.PatchType) (*writeOptions, error) {
	var o metav1.PatchOptions
	if err := metainternalscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &o); err != nil {
		return nil, badRequest("%v", err)
	}
	if errs := metavalidation.ValidatePatchOptions(&o, pt); len(errs) > 0 {
		return nil, invalidOptions("PatchOptions", errs)
	}
	return newWriteOptions(r, o.DryRun, o.FieldManager, o.FieldValidation, o.Force), nil
}

func newWriteOptions(r *http.Request, dryRun []string, manager, validation string, force *bool) *writeOptions {
	o := &writeOptions{dryRun: len(dryRun) > 0, explicitManager: manager, manager: manager,
		validation: fieldValidation(validation)}
	if o.manager == "" {
		o.manager = prefixFromUserAgent(r.UserAgent())
	}
	if o.validation == "" {
		o.validation = validateWarn // kube's default
	}
	if force != nil {
		o.force = *force
	}
	return o
}

// prefixFromUserAgent is kube's manager name for a request without
// ?fieldManager: the User-Agent up to its first '/', printable characters
// only, at most 128 bytes.
func prefixFromUserAgent(ua string) string {
	m, _, _ := strings.Cut(ua, "/")
	var buf bytes.Buffer
	for _, r := range m {
		if !unicode.IsPrint(r) {
			continue
		}
		if buf.Len()+utf8.RuneLen(r) > metavalidation.FieldManagerMaxLength {
			break
		}
		buf.WriteRune(r)
	}
	return buf.String()
}

// warnings collects the Warning headers of one request (deduplicated, in
// order, as kube's warning recorder does). A read-modify-write that is
// retried starts over with reset.
type warnings struct {
	msgs []string
	size int // bytes in msgs
}

// maxWarningBytes bounds the warnings of one answer: past it, kube's
// warning recorder (truncateAtTotalRunes) drops the rest.
const maxWarningBytes = 4 << 10

func (ws *warnings) add(msg string) {
	if ws.size >= maxWarningBytes { // also bounds the duplicate search below
		return
	}
	for _, m := range ws.msgs {
		if m == msg {
			return
		}
	}
	ws.msgs = append(ws.msgs, msg)
	ws.size += len(msg)
}

func (ws *warnings) reset() { ws.msgs, ws.size = ws.msgs[:0], 0 }

// write adds the collected warnings to the response headers.
func (ws *warnings) write(w http.ResponseWriter) {
	for _, m := range ws.msgs {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", m))
	}
}
