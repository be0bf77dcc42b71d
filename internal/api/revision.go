package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tooLargeWait bounds how long a read at a revision this member has not
// applied yet waits before answering 504, as kube's watch cache does.
const tooLargeWait = 3 * time.Second

// atLeast waits until this member has applied revision rev: a read at an
// explicit resourceVersion or continue token must never be served from an
// older state than the client has seen.
func (s *Server) atLeast(ctx context.Context, rev uint64) error {
	if rev == 0 || s.store.Revision() >= rev {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, tooLargeWait)
	defer cancel()
	if err := s.store.WaitRevision(wctx, rev); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return statusErr(http.StatusGatewayTimeout, metav1.StatusReasonTimeout,
			fmt.Sprintf("Too large resource version: %d, current: %d", rev, s.store.Revision()),
			&metav1.StatusDetails{RetryAfterSeconds: 1, Causes: []metav1.StatusCause{{
				Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}})
	}
	return nil
}

// revisionOf parses a validated resourceVersion ("" and "0" are 0).
func revisionOf(rv string) uint64 {
	n, _ := strconv.ParseUint(rv, 10, 64)
	return n
}
