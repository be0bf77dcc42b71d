package audit

import "errors"

// ErrInvalidPolicy is wrapped by every error of a policy that cannot be
// used (not decodable, not audit.k8s.io/v1 Policy, failing kube's
// validation, no rules).
var ErrInvalidPolicy = errors.New("audit: invalid policy")
