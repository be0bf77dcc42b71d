package certs

import "errors"

// ErrInvalid reports an unusable certificate, key or configuration: a
// file that is not a PEM pair, a key that does not match, a CA that cannot
// sign.
var ErrInvalid = errors.New("certs: invalid")
