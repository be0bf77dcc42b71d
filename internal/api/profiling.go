package api

import (
	"net/http"
	"net/http/pprof"
)

// profiling serves Go's profiles where kube-apiserver does: /debug/pprof/
// (the index and every named profile: heap, goroutine, allocs, …) and the
// CPU profile, trace, command line and symbol lookup. Authorization is the
// chain's, on the non-resource URL.
func profiling(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
