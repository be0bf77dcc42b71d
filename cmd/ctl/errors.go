package main

import (
	"errors"
	"strings"
)

// Exit codes by class of failure (ctl --help lists them).
const (
	exitOK          = 0
	exitFailed      = 1 // a member refused, or the operation failed
	exitUsage       = 2 // bad usage: unknown command or flag, wrong arguments, settings that name nothing usable
	exitUnreachable = 3 // no member, or a member asked, could not be reached
)

// classError gives err an exit code other than exitFailed.
type classError struct {
	code int
	err  error
}

func (e *classError) Error() string { return e.err.Error() }
func (e *classError) Unwrap() error { return e.err }

func usageError(err error) error       { return &classError{code: exitUsage, err: err} }
func unreachableError(err error) error { return &classError{code: exitUnreachable, err: err} }

func isUnreachable(err error) bool { return exitCode(err) == exitUnreachable }

// cobraUsage are the beginnings of the usage errors cobra itself returns
// without a type (unknown command, a required flag missing, flag groups).
var cobraUsage = []string{"unknown command", "required flag(s)", "if any flags in the group", "at least one of the flags"}

// exitCode maps the error a command returned to the process's exit code.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ce *classError
	if errors.As(err, &ce) {
		return ce.code
	}
	for _, p := range cobraUsage {
		if strings.HasPrefix(err.Error(), p) {
			return exitUsage
		}
	}
	return exitFailed
}
