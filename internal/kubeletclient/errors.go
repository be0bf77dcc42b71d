package kubeletclient

import "errors"

// ErrNoAddress is returned for a Node that reports no address of a
// preferred type: its kubelet cannot be reached.
var ErrNoAddress = errors.New("kubeletclient: node has no address of a preferred type")
