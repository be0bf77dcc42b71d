// Package ops tests operating a cluster of member processes: members
// paused and resumed (SIGSTOP, SIGCONT), lag and resync, as an operator
// sees them through the admin endpoints, /readyz and real clients.
package ops
