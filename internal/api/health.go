package api

import (
	"encoding/json"
	"net/http"
	"runtime"

	"k8s.io/apimachinery/pkg/version"
)

func textHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache, private")
}

func serveOK(w http.ResponseWriter, r *http.Request) {
	textHeaders(w)
	w.Write([]byte("ok"))
}

// serveReady is ok once the member knows a leader.
func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	textHeaders(w)
	if !s.store.Ready() {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("[-]leader failed: no leader known\nreadyz check failed"))
		return
	}
	w.Write([]byte("ok"))
}

// serveVersion answers /version, always indented and without a trailing
// newline, like kube.
func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	info := version.Info{Major: "1", Minor: "37", EmulationMajor: "1", EmulationMinor: "37",
		MinCompatibilityMajor: "1", MinCompatibilityMinor: "36", GitVersion: s.cfg.GitVersion, GitTreeState: "clean",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH}
	b, _ := json.MarshalIndent(&info, "", "  ")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.Write(b)
}
