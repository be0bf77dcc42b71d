package discovery

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/version"
)

// apiGroup is one served group: its versions, preferred (highest) first.
type apiGroup struct {
	name     string // "" for the core group
	versions []apiVersion
}

// apiVersion is one served group version: its resources sorted by name.
type apiVersion struct {
	version   string
	resources []Resource
}

// index is the resource table arranged the way discovery shows it.
type index struct {
	core   apiGroup   // the core group; no versions if nothing is served in it
	groups []apiGroup // every other group, in kube-apiserver's order
}

// buildIndex validates and normalizes rows and arranges them by group and
// version.
func buildIndex(rows []Resource) (index, error) {
	byGV := make(map[string]map[string][]Resource) // group -> version -> rows
	seen := make(map[string]bool)
	for _, row := range rows {
		r, err := normalize(row)
		if err != nil {
			return index{}, err
		}
		key := groupVersion(r.Group, r.Version) + "/" + r.Resource
		if seen[key] {
			return index{}, fmt.Errorf("discovery: resource %q in %q listed twice: %w",
				r.Resource, groupVersion(r.Group, r.Version), ErrDuplicateResource)
		}
		seen[key] = true
		if byGV[r.Group] == nil {
			byGV[r.Group] = make(map[string][]Resource)
		}
		byGV[r.Group][r.Version] = append(byGV[r.Group][r.Version], r)
	}
	idx := index{core: apiGroup{name: ""}}
	for name, versions := range byGV {
		g := newAPIGroup(name, versions)
		if name == "" {
			idx.core = g
			continue
		}
		idx.groups = append(idx.groups, g)
	}
	slices.SortFunc(idx.groups, compareGroups)
	return idx, nil
}

func newAPIGroup(name string, versions map[string][]Resource) apiGroup {
	g := apiGroup{name: name}
	for v, rs := range versions {
		slices.SortFunc(rs, func(a, b Resource) int { return strings.Compare(a.Resource, b.Resource) })
		g.versions = append(g.versions, apiVersion{version: v, resources: rs})
	}
	// Highest version first (v2, v1, v1beta1, v1alpha1): the first is the
	// preferred version.
	slices.SortFunc(g.versions, func(a, b apiVersion) int {
		return version.CompareKubeAwareVersionStrings(b.version, a.version)
	})
	return g
}

// compareGroups orders groups as kube-apiserver lists them: by the group
// priority of its APIServices, highest first, then by name.
func compareGroups(a, b apiGroup) int {
	if c := cmp.Compare(groupPriority(b.name), groupPriority(a.name)); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// group finds a non-core group by name.
func (idx index) group(name string) (apiGroup, bool) {
	for _, g := range idx.groups {
		if g.name == name {
			return g, true
		}
	}
	return apiGroup{}, false
}
