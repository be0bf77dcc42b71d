package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/hashicorp/raft"

	"github.com/litek8s/litek8s/internal/httpx"
	"github.com/litek8s/litek8s/internal/kv"
)

// The store's own sentinel errors; the others it returns are kv's
// (kv.ErrNotFound, kv.ErrConflict, kv.ErrNotLeader, kv.ErrNoLeader,
// kv.ErrUnknownOutcome, kv.ErrClosed).

// ErrInvalidMember: a membership request lacks an ID or address, or names
// an unknown suffrage.
var ErrInvalidMember = errors.New("invalid membership request")

// ErrBadBackup: the backup is truncated, altered or not a litek8s backup.
var ErrBadBackup = errors.New("raftstore: invalid backup")

// ErrDataDirInUse: RestoreBackup refuses a data dir that already holds
// Raft state (a Raft log or snapshots/).
var ErrDataDirInUse = errors.New("raftstore: data dir already holds Raft state")

// ErrBadJoinToken is what Config.VerifyJoinToken wraps when it refuses a
// token (unknown, expired, revoked): the joiner gets 401 with the text.
// Any other error of it is the member's own trouble (no leader to read the
// token's record from): the joiner retries.
var ErrBadJoinToken = errors.New("bad join token")

// ErrRefused: a member refused an internal call (bad token, bad request);
// retrying will not help.
var ErrRefused = errors.New("refused by the member")

// errCorrupt marks a record that cannot be decoded.
var errCorrupt = errors.New("raftstore: corrupt record")

// refusedError is a definitive refusal by a member (bad token, bad request),
// as opposed to a member that cannot be reached or has no leader yet.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *refusedError) Unwrap() error { return ErrRefused }

// mapRaftError maps a raft error into the store's typed errors.
func mapRaftError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader):
		return kv.ErrNotLeader
	case errors.Is(err, raft.ErrLeadershipLost):
		return kv.ErrUnknownOutcome
	case errors.Is(err, raft.ErrEnqueueTimeout), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return kv.ErrNoLeader
	case errors.Is(err, raft.ErrRaftShutdown):
		return kv.ErrUnknownOutcome // the entry may have been committed before the shutdown
	}
	return fmt.Errorf("raftstore: %w", err)
}

// internalCodes maps the errors of the internal endpoints to the status
// codes peers map back to kv errors (answerError).
func internalCodes() httpx.Codes {
	return httpx.Codes{Rules: []httpx.Rule{
		{Code: http.StatusMisdirectedRequest, Errs: []error{kv.ErrNotLeader}},
		{Code: http.StatusServiceUnavailable, Errs: []error{kv.ErrNoLeader, kv.ErrUnknownOutcome, kv.ErrClosed}},
	}}
}

// answerError is the error of a member's answer other than 200 to an
// internal call: the kv error internalCodes mapped, else a refusal.
func answerError(method, baseURL, path string, resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusMisdirectedRequest:
		return kv.ErrNotLeader
	case http.StatusServiceUnavailable:
		return kv.ErrNoLeader
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return &refusedError{fmt.Sprintf("raftstore: %s %s%s: %s: %s", method, baseURL, path, resp.Status, bytes.TrimSpace(msg))}
}
