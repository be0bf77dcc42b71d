package member

import (
	"net/http"

	"github.com/litek8s/litek8s/internal/httpx"
	"github.com/litek8s/litek8s/internal/member/adminapi"
)

// serveReencrypt rewrites every object whose stored form is stale (written
// with an older encryption key, or before encryption) with the current
// first key, then has every member snapshot (raftstore.RewriteStale): the
// last step of a key rotation, after which the old key can be removed.
func (m *Member) serveReencrypt(w http.ResponseWriter, r *http.Request) error {
	res, err := m.store.RewriteStale(r.Context())
	out := adminapi.ReencryptResult{Rewritten: res.Rewritten, Index: res.Index, Snapshots: res.Snapshots}
	if err != nil {
		if len(res.Snapshots) == 0 && res.Index == 0 {
			return err // nothing done
		}
		out.Error = err.Error()
	}
	n := 0
	for _, c := range res.Rewritten {
		n += c
	}
	m.log.Info("admin: stale objects rewritten", "objects", n, "index", res.Index, "error", out.Error)
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}
