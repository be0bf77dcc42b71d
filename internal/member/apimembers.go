package member

import (
	"github.com/litek8s/litek8s/internal/controllers/kubernetesservice"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// apiMembers lists the members for the default/kubernetes Service's
// endpoints: the Raft configuration with the recorded API URLs and, as
// the leader sees them, the members' last lag reports (how it tells a
// member that serves from one that stopped).
type apiMembers struct{ store *raftstore.Store }

func (a apiMembers) APIMembers() ([]kubernetesservice.Member, error) {
	ms, err := a.store.Members()
	if err != nil {
		return nil, err
	}
	lag, err := a.store.Lag()
	if err != nil {
		return nil, err
	}
	reports := make(map[string]raftstore.MemberLag, len(lag))
	for _, l := range lag {
		reports[l.ID] = l
	}
	out := make([]kubernetesservice.Member, 0, len(ms))
	for _, m := range ms {
		out = append(out, kubernetesservice.Member{APIURL: m.APIURL, Self: m.ID == a.store.ID(),
			LastReport: reports[m.ID].LastReport})
	}
	return out, nil
}
