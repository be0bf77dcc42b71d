// Package jointoken owns the cluster's join tokens: what a token looks
// like, how it is recorded in the cluster (a Secret of type
// litek8s.io/join-token in kube-system holding the token's hash, its
// expiry and description, never the token), and how a member verifies a
// token a joiner presents. The token a cluster was bootstrapped with is
// verified against the hash every member keeps (datadir.Secrets) until a
// record revokes it; the others (`ctl token create`) only by their
// records. Plain data and functions: no goroutines, no state.
package jointoken
