package simnode

import "errors"

// errNoAddress: every address of a node's pod range is taken (cannot
// happen while Config.Pods is at most 253).
var errNoAddress = errors.New("simnode: no pod address left on the node")
