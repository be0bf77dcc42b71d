package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

var (
	errMissing = errors.New("missing")
	errBusy    = errors.New("busy")
)

func TestCodesOf(t *testing.T) {
	codes := Codes{Rules: []Rule{
		{Code: http.StatusNotFound, Errs: []error{errMissing}},
		{Code: http.StatusServiceUnavailable, Errs: []error{errBusy, context.Canceled}},
	}}
	for _, tc := range []struct {
		name  string
		codes Codes
		err   error
		want  int
	}{
		{"own code first", codes, fmt.Errorf("wrapped: %w", Errorf(http.StatusBadRequest, "bad %d", 1)), http.StatusBadRequest},
		{"first rule", codes, errMissing, http.StatusNotFound},
		{"wrapped, second error of a rule", codes, fmt.Errorf("x: %w", context.Canceled), http.StatusServiceUnavailable},
		{"no rule: 500", codes, errors.New("other"), http.StatusInternalServerError},
		{"no rule: default", Codes{Default: http.StatusBadGateway}, errMissing, http.StatusBadGateway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.codes.Of(tc.err); got != tc.want {
				t.Errorf("Of(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

func TestAdapter(t *testing.T) {
	var logged strings.Builder
	a := Adapter{Codes: Codes{Rules: []Rule{{Code: http.StatusNotFound, Errs: []error{errMissing}}}},
		Write: PlainText, Log: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Msg: "test request"}
	for _, tc := range []struct {
		name     string
		h        HandlerFunc
		code     int
		body     string
		logLevel string
	}{
		{"answered", func(w http.ResponseWriter, r *http.Request) error {
			WriteJSON(w, http.StatusAccepted, map[string]int{"n": 1})
			return nil
		}, http.StatusAccepted, `{"n":1}` + "\n", ""},
		{"mapped error", func(w http.ResponseWriter, r *http.Request) error {
			return fmt.Errorf("thing: %w", errMissing)
		}, http.StatusNotFound, "thing: missing\n", "level=DEBUG msg=\"test request refused\""},
		{"own code", func(w http.ResponseWriter, r *http.Request) error {
			return Errorf(http.StatusUnsupportedMediaType, "no %s", "xml")
		}, http.StatusUnsupportedMediaType, "no xml\n", "level=DEBUG"},
		{"unmapped error", func(w http.ResponseWriter, r *http.Request) error {
			return errors.New("boom")
		}, http.StatusInternalServerError, "boom\n", "level=WARN msg=\"test request failed\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logged.Reset()
			rec := httptest.NewRecorder()
			a.Handler(tc.h).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
			if rec.Code != tc.code || rec.Body.String() != tc.body {
				t.Errorf("answer %d %q, want %d %q", rec.Code, rec.Body.String(), tc.code, tc.body)
			}
			if tc.logLevel == "" && logged.Len() != 0 {
				t.Errorf("logged %q for a success", logged.String())
			}
			if tc.logLevel != "" && !strings.Contains(logged.String(), tc.logLevel) {
				t.Errorf("log %q, want %q", logged.String(), tc.logLevel)
			}
		})
	}
}

func TestForwarder(t *testing.T) {
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-From", r.Header.Get("X-Relayed"))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.URL.Path, r.Header.Get("Authorization"), b)
	}))
	defer leader.Close()
	f := Forwarder{Header: "X-Relayed", From: "m1", Transport: leader.Client().Transport,
		OnError: func(w http.ResponseWriter, leaderURL string, err error) {
			http.Error(w, "unreachable "+leaderURL, http.StatusBadGateway)
		}}

	r := httptest.NewRequest("POST", "/admin/v1/members", strings.NewReader(`{"id":"x"}`))
	r.Header.Set("Authorization", "Bearer tok")
	if f.Relayed(r) {
		t.Fatal("a client's request counts as relayed")
	}
	rec := httptest.NewRecorder()
	if err := f.Forward(rec, r, leader.URL); err != nil {
		t.Fatal(err)
	}
	if want := `POST /admin/v1/members Bearer tok {"id":"x"}`; rec.Code != http.StatusCreated || rec.Body.String() != want ||
		rec.Header().Get("X-From") != "m1" {
		t.Errorf("relayed answer %d %q (X-From %q), want 201 %q from m1", rec.Code, rec.Body.String(),
			rec.Header().Get("X-From"), want)
	}

	relayed := httptest.NewRequest("GET", "/x", nil)
	relayed.Header.Set("X-Relayed", "m0")
	if !f.Relayed(relayed) {
		t.Error("a relayed request is not seen as relayed")
	}

	if err := f.Forward(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil), "http://[::1"); err == nil {
		t.Error("a bad leader URL was accepted")
	}

	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()
	rec = httptest.NewRecorder()
	if err := f.Forward(rec, httptest.NewRequest("GET", "/x", nil), goneURL); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusBadGateway || rec.Body.String() != "unreachable "+goneURL+"\n" {
		t.Errorf("unreachable leader: %d %q", rec.Code, rec.Body.String())
	}
}
