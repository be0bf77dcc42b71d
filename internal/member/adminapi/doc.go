// Package adminapi is the wire format of a member's admin API, what
// `ctl` calls: its paths and the JSON bodies of requests, answers and
// errors. Both internal/member (which serves it) and cmd/ctl import it, so
// that ctl links no API server or controllers.
//
// The endpoints (/admin/v1/...); a member serves them only to requests
// that carry the admin token:
//
//	GET    /admin/v1/status                 this member's Status
//	GET    /admin/v1/members                MemberList (the leader's view; ?local=true: this member's)
//	POST   /admin/v1/members                AddMemberRequest → MemberList
//	DELETE /admin/v1/members/{id}           → MemberList
//	POST   /admin/v1/members/{id}/promote   → MemberList
//	POST   /admin/v1/members/{id}/demote    → MemberList
//	POST   /admin/v1/members/{id}/resync    → 202 MemberLag (the member resyncs at its next lag report;
//	                                          409 when it has not reported lately: down or cut off)
//	GET    /admin/v1/lag                    LagList (the leader's view)
//	POST   /admin/v1/leader/transfer        TransferRequest (optional) → LeaderInfo (409 when the voter
//	                                          named has not reported lately, or the transfer failed)
//	GET    /admin/v1/kubeconfig             this member's admin kubeconfig (YAML)
//	GET    /admin/v1/snapshot               a consistent backup (raftstore.Backup), streamed
//	GET    /admin/v1/certs                  CertList: this member's certificates
//	POST   /admin/v1/certs/rotate           → CertList after this member issued itself a new member certificate
//	POST   /admin/v1/encryption/reencrypt   → ReencryptResult (leader: rewrites stale objects, every member snapshots)
//
// Membership changes, resync requests and GET lag run on the leader: a
// follower relays them there with the caller's token and relays the
// answer. GET members is relayed too, so that a list right after a change
// shows it; with no leader known, the member answers from its own
// configuration, as it does with ?local=true (what `ctl status` shows
// while the relay fails: an election). Errors are Error bodies.
//
// Concurrency: types only.
package adminapi
