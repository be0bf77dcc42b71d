package simnode_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/controllers/simnode"
	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

func TestParseTaints(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []corev1.Taint
		err  string // a part of the error; "" for none
	}{
		{in: "", want: nil},
		{in: "  ", want: nil},
		{in: "litek8s.io/simulated=true:NoSchedule", want: []corev1.Taint{
			{Key: "litek8s.io/simulated", Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		{in: "a=1:NoExecute, b:PreferNoSchedule", want: []corev1.Taint{
			{Key: "a", Value: "1", Effect: corev1.TaintEffectNoExecute},
			{Key: "b", Effect: corev1.TaintEffectPreferNoSchedule}}},
		{in: "a=1:NoSchedule,a=2:NoExecute", want: []corev1.Taint{
			{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule},
			{Key: "a", Value: "2", Effect: corev1.TaintEffectNoExecute}}},
		{in: "a=1", err: "want key=value:Effect"},
		{in: "a=1:Sometimes", err: `effect "Sometimes"`},
		{in: "a=1:", err: `effect ""`},
		{in: "=1:NoSchedule", err: `taint key ""`},
		{in: "bad key=1:NoSchedule", err: `taint key "bad key"`},
		{in: "a=not valid:NoSchedule", err: `value "not valid"`},
		{in: "a=1:NoSchedule,a=2:NoSchedule", err: "given twice"},
		{in: "a:NoSchedule,,b:NoSchedule", err: "want key=value:Effect"},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := simnode.ParseTaints(c.in)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseTaints(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ParseTaints(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			}
		})
	}
}

func TestConfigValidateTaints(t *testing.T) {
	cfg := simnode.DefaultConfig()
	cfg.Count = 1
	cfg.Taints = []corev1.Taint{{Key: "a", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{Time: time.Now()}}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "timeAdded") {
		t.Errorf("Validate with a NoSchedule taint's timeAdded: %v", err)
	}
	cfg.Taints = []corev1.Taint{{Key: "a", Effect: "Never"}}
	if err := cfg.Validate(); err == nil {
		t.Error("Validate accepted the effect Never")
	}
	cfg.Taints = []corev1.Taint{{Key: "a", Value: "b", Effect: corev1.TaintEffectNoSchedule}}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// TestSimulatedNodeTaints: a simulated node registers with Config.Taints
// (beside the lifecycle's own, which go once it is Ready); the scheduler
// leaves a pod that does not tolerate them Pending and puts one that does
// on the node, where it runs.
func TestSimulatedNodeTaints(t *testing.T) {
	taint := corev1.Taint{Key: "litek8s.io/simulated", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	c := membertest.StartCluster(t, 1, simulated(1), func(cfg *member.Config) {
		cfg.Controllers.Scheduling.SimNodes.Taints = []corev1.Taint{taint}
	})
	cs := c.Clientset(0)
	const ns = "default"
	membertest.Eventually(t, 30*time.Second, func() error {
		n, err := cs.CoreV1().Nodes().Get(t.Context(), "sim-node-0", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !ready(n) || len(n.Spec.Taints) != 1 || n.Spec.Taints[0] != taint {
			return fmt.Errorf("node sim-node-0: ready %v, taints %+v; want Ready with only %+v", ready(n), n.Spec.Taints, taint)
		}
		return nil
	})

	createPod(t, cs, ns, "intolerant")
	createPod(t, cs, ns, "tolerant", func(p *corev1.Pod) {
		p.Spec.Tolerations = []corev1.Toleration{{Key: taint.Key, Operator: corev1.TolerationOpEqual, Value: "true",
			Effect: corev1.TaintEffectNoSchedule}}
	})
	if p := waitPod(t, cs, ns, "tolerant", isRunning); p.Spec.NodeName != "sim-node-0" {
		t.Errorf("tolerant pod on %q, want sim-node-0", p.Spec.NodeName)
	}
	var msg string
	p := waitPod(t, cs, ns, "intolerant", func(p *corev1.Pod) error {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				msg = c.Message
				return nil
			}
		}
		return fmt.Errorf("pod intolerant: conditions %+v, want PodScheduled False (Unschedulable)", p.Status.Conditions)
	})
	if p.Spec.NodeName != "" || !strings.Contains(msg, "untolerated taint") {
		t.Errorf("intolerant pod on %q: %+v, want unbound for an untolerated taint", p.Spec.NodeName, p.Status.Conditions)
	}
}
