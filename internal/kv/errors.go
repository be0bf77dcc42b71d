package kv

import "errors"

// Errors a store returns. Callers test them with errors.Is.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: a create found the key taken.
	ErrAlreadyExists = errors.New("already exists")
	// ErrConflict: a precondition (resourceVersion or uid) did not hold.
	ErrConflict = errors.New("conflict")
	// ErrExpired: the requested revision is older than the history kept.
	ErrExpired = errors.New("revision expired")
	// ErrNotLeader: this member cannot accept writes; forward to the leader.
	ErrNotLeader = errors.New("not the leader")
	// ErrNoLeader: no leader is known right now; retry later.
	ErrNoLeader = errors.New("no leader")
	// ErrUnknownOutcome: the write may or may not have been committed
	// (leadership was lost while it was in flight). The client may retry.
	ErrUnknownOutcome = errors.New("outcome unknown")
	// ErrClosed: the store is shut down.
	ErrClosed = errors.New("store closed")
)

// ExpiredError is ErrExpired with the oldest revision still available:
// errors.Is(err, ErrExpired) holds for it.
type ExpiredError struct {
	Oldest uint64
}

func (e *ExpiredError) Error() string { return ErrExpired.Error() }

// Is makes errors.Is(err, ErrExpired) true.
func (e *ExpiredError) Is(target error) bool { return target == ErrExpired }
