// Command ctl administers a litek8s cluster through a member's admin
// endpoints (/admin/v1/..., see internal/member/adminapi) with the admin
// credentials of a kubeconfig (default data/kubeconfig, the one a member
// writes at first start) or of flags:
//
//	ctl status                         every member: role, term, applied index, lag, readiness
//	ctl members list|add|remove|promote|demote
//	ctl leader transfer [--to ID]
//	ctl resync MEMBER                  make a follower fence itself and catch up
//	ctl snapshot save FILE             a consistent backup streamed from the member asked
//	ctl snapshot inspect FILE          check and describe a backup (offline)
//	ctl snapshot restore FILE --data-dir DIR --id ID [--raft-addr ADDR]   (offline)
//	ctl kubeconfig                     an admin kubeconfig for the member asked
//	ctl health                         exit 0 when the member is ready
//	ctl version [--client]             ctl's version and the asked member's
//
// Global flags (each also LITEK8S_<NAME> in the environment, e.g.
// LITEK8S_SERVER): --kubeconfig, --server, --token and
// --certificate-authority (which override the kubeconfig's), and -o/--output
// table (default) or json, which prints the JSON the endpoints return.
// Any failure, including an unreachable member in `status`, exits 1.
package main
