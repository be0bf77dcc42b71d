package api

import "net/http"

// chain wraps the routes in the handlers every request passes, outermost
// first: limits (body size, requests in flight, timeouts: limits.go), then
// authentication and authorization, then the metrics of what was served.
func (s *Server) chain(mux http.Handler) http.Handler {
	h := s.instrument(mux)
	h = s.authenticate(h)
	h = s.limit(h)
	return h
}
