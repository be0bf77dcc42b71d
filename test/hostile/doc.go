// Package hostile is the hostile-input suite (issue 8, acceptance 4): raw
// HTTP requests whose bodies no client library would send (deep nesting,
// huge arrays and bodies, invalid UTF-8, duplicate keys, invalid names,
// numbers out of range, wrong kinds, protobuf garbage, bodies that are not
// objects) against a real 3-member cluster, through the leader and a
// follower. Each must get a Kubernetes Status with a 4xx code, the
// expected reason and a clear message, and change nothing in the store.
package hostile
