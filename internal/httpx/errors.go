package httpx

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an error with its own HTTP status code (a bad request, a
// refused credential): Codes.Of answers Code for it before any rule.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Errorf makes an *Error with code and a formatted message.
func Errorf(code int, format string, args ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Rule maps the errors Errs (matched with errors.Is) to Code.
type Rule struct {
	Code int
	Errs []error
}

// Codes is an error mapper: an *Error's own code, else the Code of the
// first Rule one of whose errors err is, else Default (500 when zero).
type Codes struct {
	Rules   []Rule
	Default int
}

// Of is the status code of err.
func (c Codes) Of(err error) int {
	var he *Error
	if errors.As(err, &he) {
		return he.Code
	}
	for _, r := range c.Rules {
		for _, target := range r.Errs {
			if errors.Is(err, target) {
				return r.Code
			}
		}
	}
	if c.Default != 0 {
		return c.Default
	}
	return http.StatusInternalServerError
}
