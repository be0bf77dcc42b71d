package policy

import "errors"

// ErrConfig is returned by Config.Validate for a Config that lacks a
// collaborator.
var ErrConfig = errors.New("policy: invalid config")
