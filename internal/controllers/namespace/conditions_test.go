package namespace

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// updateConditions writes kube's five conditions, reports a change only
// when one changed, and moves a condition's lastTransitionTime only when
// its status changes.
func TestUpdateConditions(t *testing.T) {
	long := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	held := &tally{remaining: map[schema.GroupVersionResource]int{{Version: "v1", Resource: "configmaps"}: 2},
		finalizers: map[string]int{"b.example.com/x": 1, "a.example.com/y": 2}}
	var status corev1.NamespaceStatus
	if !updateConditions(&status, held.conditions(nil)) {
		t.Fatal("first update: no change reported")
	}
	want := map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "False/ResourcesDiscovered",
		corev1.NamespaceDeletionGVParsingFailure: "False/ParsedGroupVersions",
		corev1.NamespaceDeletionContentFailure:   "False/ContentDeleted",
		corev1.NamespaceContentRemaining:         "True/SomeResourcesRemain/Some resources are remaining: configmaps. has 2 resource instances",
		corev1.NamespaceFinalizersRemaining: "True/SomeFinalizersRemain/Some content in the namespace has finalizers remaining: " +
			"a.example.com/y in 2 resource instances, b.example.com/x in 1 resource instances",
	}
	if len(status.Conditions) != len(want) {
		t.Fatalf("%d conditions, want %d", len(status.Conditions), len(want))
	}
	for i := range status.Conditions {
		c := &status.Conditions[i]
		got := string(c.Status) + "/" + c.Reason
		if c.Status == corev1.ConditionTrue {
			got += "/" + c.Message
		}
		if got != want[c.Type] {
			t.Errorf("%s: %q, want %q", c.Type, got, want[c.Type])
		}
		c.LastTransitionTime = long
	}
	if updateConditions(&status, held.conditions(nil)) {
		t.Error("the same conditions again: a change reported")
	}

	failed := &tally{errs: []error{errors.New("boom")}}
	if !updateConditions(&status, failed.conditions(errors.New("no resources"))) {
		t.Fatal("failure: no change reported")
	}
	for _, c := range status.Conditions {
		moved := !c.LastTransitionTime.Equal(&long)
		switch c.Type {
		case corev1.NamespaceDeletionGVParsingFailure:
			if moved {
				t.Errorf("%s: lastTransitionTime moved, its status did not change", c.Type)
			}
		case corev1.NamespaceDeletionContentFailure:
			if c.Status != corev1.ConditionTrue || c.Message != "Failed to delete all resource types, 1 remaining: boom" || !moved {
				t.Errorf("%s: %+v", c.Type, c)
			}
		case corev1.NamespaceDeletionDiscoveryFailure:
			if c.Status != corev1.ConditionTrue || c.Reason != "DiscoveryFailed" || !moved {
				t.Errorf("%s: %+v", c.Type, c)
			}
		case corev1.NamespaceContentRemaining, corev1.NamespaceFinalizersRemaining:
			if c.Status != corev1.ConditionFalse || !moved {
				t.Errorf("%s: %+v, want it False again", c.Type, c)
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"workers": func(c *Config) { c.Workers = 0 },
		"delay":   func(c *Config) { c.DeletionDelay = -1 },
		"recheck": func(c *Config) { c.RecheckMax = c.RecheckMin / 2 },
		"retry":   func(c *Config) { c.RetryBase = 0 },
	} {
		c := DefaultConfig()
		if err := c.Validate(); err != nil {
			t.Fatalf("defaults: %v", err)
		}
		mod(&c)
		if c.Validate() == nil {
			t.Errorf("%s: invalid config accepted", name)
		}
	}
}
