package member_test

import (
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/litek8s/litek8s/internal/member/membertest"
)

// flowcontrol.apiserver.k8s.io/v1 through client-go on a real member:
// discovered, kube's defaults, CRUD and the status subresource.
func TestFlowControlKinds(t *testing.T) {
	c := membertest.StartCluster(t, 1, membertest.FastRaft)
	cs := c.PlainClientset(0)
	ctx := t.Context()

	_, lists, err := cs.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range lists {
		if l.GroupVersion == "flowcontrol.apiserver.k8s.io/v1" {
			for _, r := range l.APIResources {
				names = append(names, r.Name)
			}
		}
	}
	slices.Sort(names)
	want := []string{"flowschemas", "flowschemas/status", "prioritylevelconfigurations", "prioritylevelconfigurations/status"}
	if !slices.Equal(names, want) {
		t.Fatalf("flowcontrol.apiserver.k8s.io/v1 resources %v, want %v", names, want)
	}

	plc, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "workload"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{
				Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{}}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := plc.Spec.Limited
	if *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || l.LimitResponse.Queuing.Queues != 64 ||
		l.LimitResponse.Queuing.HandSize != 8 || l.LimitResponse.Queuing.QueueLengthLimit != 50 {
		t.Errorf("priority level defaults %+v %+v", l, l.LimitResponse.Queuing)
	}

	fs, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"e2e": "x"}},
		Spec:       flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload"}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fs.Spec.MatchingPrecedence != 1000 || fs.Generation != 1 {
		t.Errorf("flow schema precedence %d generation %d, want 1000 and 1", fs.Spec.MatchingPrecedence, fs.Generation)
	}
	patched, err := cs.FlowcontrolV1().FlowSchemas().Patch(ctx, "team", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"patched":"true"}},"spec":{"matchingPrecedence":9999}}`), metav1.PatchOptions{})
	if err != nil || patched.Spec.MatchingPrecedence != 9999 || patched.Generation != 2 {
		t.Fatalf("patch: %v %+v", err, patched)
	}
	st, err := cs.FlowcontrolV1().FlowSchemas().Patch(ctx, "team", types.MergePatchType,
		[]byte(`{"status":{"conditions":[{"type":"PatchStatusFailed","status":"False","reason":"e2e"}]},"spec":{"matchingPrecedence":1}}`),
		metav1.PatchOptions{}, "status")
	if err != nil || len(st.Status.Conditions) != 1 || st.Spec.MatchingPrecedence != 9999 {
		t.Fatalf("status patch: %v %+v (the spec must not change through /status)", err, st)
	}
	list, err := cs.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{LabelSelector: "e2e=x"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v %+v", err, list)
	}

	_, err = cs.FlowcontrolV1().FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "bad"}},
		metav1.CreateOptions{})
	const msg = `FlowSchema.flowcontrol.apiserver.k8s.io "bad" is invalid: spec.priorityLevelConfiguration.name: Required value: must reference a priority level`
	if err == nil || err.Error() != msg {
		t.Errorf("flow schema without a level: %v, want %q", err, msg)
	}
}
