// Package httpx is the one convention of litek8s's HTTP endpoints that are
// not the Kubernetes API: a member's admin API (internal/member, what ctl
// calls) and the members' internal API (internal/raftstore: read index,
// join, lag reports, join secrets, hello).
//
//   - A handler returns its error (HandlerFunc); an Adapter writes it, with
//     the status code its Codes (the error mapper) picks and the body its
//     Write formats (each API keeps its own wire format), and logs it.
//   - An error that carries its own status code (a bad request) is an
//     *Error, made with Errorf.
//   - Forward relays a request to the leader with a reverse proxy, marked
//     so that a member that no longer leads refuses it rather than relaying
//     it again.
//   - WriteJSON writes a JSON answer.
//
// Which errors map to which codes stays with the package that owns the
// errors (raftstore/errors.go, member/admin.go): httpx imports no other
// litek8s package.
//
// Concurrency: no state of its own; an Adapter is immutable once built and
// safe for concurrent use.
package httpx
