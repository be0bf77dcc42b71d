package api

import (
	"slices"
	"testing"
)

func TestForbiddenNodeLabels(t *testing.T) {
	for _, c := range []struct {
		name     string
		new, old map[string]string
		want     []string
	}{
		{"kubelet labels", map[string]string{"kubernetes.io/hostname": "n1", "node.kubernetes.io/instance-type": "x",
			"topology.kubernetes.io/zone": "z", "team": "a"}, nil, nil},
		{"node-restriction prefix", map[string]string{"node-restriction.kubernetes.io/pool": "gold",
			"example.node-restriction.kubernetes.io/x": "y"}, nil,
			[]string{"example.node-restriction.kubernetes.io/x", "node-restriction.kubernetes.io/pool"}},
		{"unknown kubernetes.io label", map[string]string{"node-role.kubernetes.io/control-plane": ""}, nil,
			[]string{"node-role.kubernetes.io/control-plane"}},
		{"removing one counts", nil, map[string]string{"node-restriction.kubernetes.io/pool": "gold"},
			[]string{"node-restriction.kubernetes.io/pool"}},
		{"unchanged", map[string]string{"node-role.kubernetes.io/x": ""}, map[string]string{"node-role.kubernetes.io/x": ""}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := forbiddenNodeLabels(c.new, c.old); !slices.Equal(got, c.want) {
				t.Errorf("forbiddenNodeLabels = %v, want %v", got, c.want)
			}
		})
	}
}
