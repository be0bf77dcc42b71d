// Command ctl administers a litek8s cluster through its members' admin
// endpoints (/admin/v1/..., see internal/member/adminapi) with the admin
// credentials of a kubeconfig or of flags:
//
//	ctl status                         every member: role, term, applied index, lag, readiness
//	ctl members list|add|remove|promote|demote
//	ctl leader transfer [--to ID]
//	ctl resync MEMBER                  make a running follower fence itself and catch up
//	ctl snapshot save FILE             a consistent backup streamed from a member
//	ctl snapshot inspect FILE          check and describe a backup (offline)
//	ctl snapshot restore FILE --data-dir DIR --id ID [--raft-addr ADDR]   (offline)
//	ctl kubeconfig                     an admin kubeconfig for the member that answers
//	ctl health                         exit 0 when the member that answers is ready
//	ctl version [--client]             ctl's build and every member's
//	ctl token|certs|secrets ...        join tokens, certificates, encryption at rest
//
// Which cluster (as kubectl and etcdctl find it): --endpoints URL,URL...,
// else the server of the kubeconfig's current context (--context picks
// another); the kubeconfig is --kubeconfig, else $KUBECONFIG (a merged
// list), else data/kubeconfig when it exists (the one a member writes in
// its working directory: more specific than the user's default, which
// often names another cluster), else ~/.kube/config. Each request goes to
// the first endpoint that answers. When the endpoints came from a
// kubeconfig, ctl also tries the members it remembered from an earlier
// answer of the same cluster (named by its CA) in --cache-dir: a
// kubeconfig whose member is down still reaches the others.
//
// --timeout (5s) bounds each command: every member it asks and the whole,
// a change's wait for a leader included; --dial-timeout (2s) bounds each
// connection, so a dead or paused member is skipped quickly. snapshot save
// and secrets reencrypt run until done.
//
// -o table (default), json or yaml on every command. Exit codes: 0 ok;
// 1 failed (a member refused, or the operation failed); 2 bad usage
// (unknown command or flag, wrong arguments, bad -o, settings that name
// no cluster); 3 unreachable (no member could be reached, or a member the
// command asked could not, e.g. one member in `status`).
//
// Global flags are also LITEK8S_<NAME> in the environment (e.g.
// LITEK8S_ENDPOINTS).
package main
