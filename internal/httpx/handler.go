package httpx

import (
	"log/slog"
	"net/http"
)

// HandlerFunc is an endpoint that returns its error instead of writing it;
// an Adapter writes it. It returns nil once it has answered.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Adapter turns HandlerFuncs into http.Handlers.
type Adapter struct {
	// Codes picks the status code of an error.
	Codes Codes
	// Write writes the answer to a failed request with its code (each API
	// has its own error body).
	Write func(w http.ResponseWriter, code int, err error)
	// Log, when set, gets a Warn for every 5xx and a Debug for every other
	// error, with Msg+" failed" or Msg+" refused".
	Log *slog.Logger
	Msg string
}

// Handler adapts h: an error becomes a's answer with the code a.Codes picks.
func (a Adapter) Handler(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		code := a.Codes.Of(err)
		if a.Log != nil {
			if code >= 500 {
				a.Log.Warn(a.Msg+" failed", "method", r.Method, "path", r.URL.Path, "code", code, "err", err)
			} else {
				a.Log.Debug(a.Msg+" refused", "method", r.Method, "path", r.URL.Path, "code", code, "err", err)
			}
		}
		a.Write(w, code, err)
	})
}

// PlainText writes err's message as text, the way http.Error does.
func PlainText(w http.ResponseWriter, code int, err error) {
	http.Error(w, err.Error(), code)
}
