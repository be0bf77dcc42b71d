package discovery

import (
	"fmt"
	"slices"
	"strings"
)

// Resource is one row of the table New is built from: a resource served in
// one group version.
type Resource struct {
	// Group is the API group, "" for the core group. Version is required.
	Group, Version string
	// Resource is the plural name in URLs ("configmaps"). Singular defaults
	// to the lower-cased Kind. Kind is required.
	Resource, Singular, Kind string
	// Namespaced is false for cluster-scoped resources.
	Namespaced bool
	// ShortNames and Categories are announced in the order given.
	ShortNames, Categories []string
	// Verbs are the verbs served on the resource (create, delete,
	// deletecollection, get, list, patch, update, watch). They are announced
	// sorted, like kube-apiserver does for built-in resources, unless
	// KeepVerbOrder is set (custom resources: kube's apiextensions server
	// announces delete,deletecollection,get,list,patch,create,update,watch).
	Verbs []string
	// Subresources are announced sorted by name.
	Subresources []Subresource
	// KeepVerbOrder announces Verbs in the order given.
	KeepVerbOrder bool
}

// Subresource is a subresource of a Resource ("status", "scale").
type Subresource struct {
	Name string
	// Group, Version and Kind are the kind the subresource answers with
	// (autoscaling, v1, Scale for deployments/scale). An empty Version means
	// the parent's group and version (Group must then be empty too); an
	// empty Kind means the parent's Kind.
	Group, Version, Kind string
	// Verbs are the verbs served on the subresource, announced sorted.
	Verbs []string
}

// normalize validates r and returns a copy with defaults applied and verbs
// and subresources sorted. The copy shares no slice with r.
func normalize(r Resource) (Resource, error) {
	if err := validate(r); err != nil {
		return Resource{}, err
	}
	out := r
	if out.Singular == "" {
		out.Singular = strings.ToLower(r.Kind)
	}
	out.ShortNames = slices.Clone(r.ShortNames)
	out.Categories = slices.Clone(r.Categories)
	out.Verbs = sortedVerbs(r.Verbs)
	if r.KeepVerbOrder {
		out.Verbs = slices.Clone(r.Verbs)
	}
	out.Subresources = make([]Subresource, 0, len(r.Subresources))
	for _, s := range r.Subresources {
		out.Subresources = append(out.Subresources, normalizeSub(out, s))
	}
	slices.SortFunc(out.Subresources, func(a, b Subresource) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func normalizeSub(parent Resource, s Subresource) Subresource {
	if s.Version == "" {
		s.Group, s.Version = parent.Group, parent.Version
	}
	if s.Kind == "" {
		s.Kind = parent.Kind
	}
	s.Verbs = sortedVerbs(s.Verbs)
	return s
}

// sortedVerbs returns verbs sorted and without repeats, in a new slice.
func sortedVerbs(verbs []string) []string {
	out := slices.Clone(verbs)
	slices.Sort(out)
	return slices.Compact(out)
}

// validate checks one row; it returns an error wrapping ErrInvalidResource
// or ErrDuplicateResource.
func validate(r Resource) error {
	where := fmt.Sprintf("discovery: resource %q in %q", r.Resource, groupVersion(r.Group, r.Version))
	switch {
	case r.Version == "" || strings.Contains(r.Version, "/"):
		return fmt.Errorf("%s: bad version: %w", where, ErrInvalidResource)
	case strings.Contains(r.Group, "/"):
		return fmt.Errorf("%s: bad group: %w", where, ErrInvalidResource)
	case r.Resource == "" || strings.Contains(r.Resource, "/"):
		return fmt.Errorf("%s: bad resource name: %w", where, ErrInvalidResource)
	case r.Kind == "":
		return fmt.Errorf("%s: no kind: %w", where, ErrInvalidResource)
	case len(r.Verbs) == 0:
		return fmt.Errorf("%s: no verbs: %w", where, ErrInvalidResource)
	}
	seen := make(map[string]bool, len(r.Subresources))
	for _, s := range r.Subresources {
		if err := validateSub(s); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if seen[s.Name] {
			return fmt.Errorf("%s: subresource %q listed twice: %w", where, s.Name, ErrDuplicateResource)
		}
		seen[s.Name] = true
	}
	return nil
}

func validateSub(s Subresource) error {
	switch {
	case s.Name == "" || strings.Contains(s.Name, "/"):
		return fmt.Errorf("bad subresource name %q: %w", s.Name, ErrInvalidResource)
	case s.Version == "" && s.Group != "":
		return fmt.Errorf("subresource %q: group %q without a version: %w", s.Name, s.Group, ErrInvalidResource)
	case len(s.Verbs) == 0:
		return fmt.Errorf("subresource %q: no verbs: %w", s.Name, ErrInvalidResource)
	}
	return nil
}

// groupVersion formats a group version the way Kubernetes does: "v1" for
// the core group, "apps/v1" otherwise.
func groupVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}
