package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

// Issue 19, acceptance 6: `helm upgrade --set replicas=5`, then `--set
// replicas=3`, ends with 3 voters and no dead member, through the chart's
// dead-member cleanup alone (autopilot.*; kubernetesAPI.removeScaledDownMembers,
// which needs the Kubernetes API, is off). The StatefulSet runs as local
// processes (pod_test.go). The upgrade is what the StatefulSet controller
// does with the second rendering: it deletes the Pods past the new size
// (SIGTERM, highest ordinal first) and leaves the others running (the
// settings' checksum is the same: scaling restarts no member).
func TestScaleDownAsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 5 member processes")
	}
	nodeBin, ctlBin := binaries(t)
	h := newHelm(t)
	set := []string{"--set", "leaderService.enabled=false", "--set", "kubernetesAPI.peerPodIPs=false",
		"--set", "kubernetesAPI.removeScaledDownMembers=false", "--set", "autopilot.deadMemberTimeout=3s"}
	ms5 := h.template(chartDir(t), append(set, "--set", "replicas=5")...)
	ms3 := h.template(chartDir(t), append(set, "--set", "replicas=3")...)
	sum := func(ms manifests) string { return ms.statefulSet(t).Spec.Template.Annotations["checksum/config"] }
	if sum(ms5) != sum(ms3) {
		t.Fatal("scaling changes checksum/config: the StatefulSet would restart every member")
	}
	if n := int(*ms3.statefulSet(t).Spec.Replicas); n != 3 {
		t.Fatalf("replicas %d after the upgrade, want 3", n)
	}
	sts := ms5.statefulSet(t)
	if n := int(*sts.Spec.Replicas); n != 5 {
		t.Fatalf("replicas %d, want 5", n)
	}
	if cfg := ms5.configMap(t, sts.Name+"-config").Data["config.yaml"]; !strings.Contains(cfg, "min-quorum: 3") ||
		!strings.Contains(cfg, `dead-member-timeout: "3s"`) {
		t.Fatalf("config.yaml without min-quorum 3 and the timeout:\n%s", cfg)
	}
	ips := loopbackIPs(t, 5)
	var rendered []int32
	for _, p := range sts.Spec.Template.Spec.Containers[0].Ports {
		rendered = append(rendered, p.ContainerPort)
	}
	ports := localPorts(t, ips, rendered)
	names := map[string]string{}
	for i := range 5 {
		names[fmt.Sprintf("%s-%d.%s.%s.svc.cluster.local", sts.Name, i, sts.Spec.ServiceName, sts.Namespace)] = ips[i]
	}
	bins := map[string]string{"node": nodeBin, "ctl": ctlBin}
	root := t.TempDir()
	var claims []string
	for _, c := range sts.Spec.VolumeClaimTemplates {
		claims = append(claims, c.Name)
	}
	pod := func(ms manifests, i int) *proc {
		m := hostMap{names: names, bindIP: ips[i], ports: ports, bins: bins}
		return podProcess(t, ms, ms.statefulSet(t).Spec.Template.Spec, claims, fmt.Sprintf("%s-%d", sts.Name, i),
			sts.Namespace, m, root)
	}
	procs := make([]*proc, 5)
	for i := range 5 {
		procs[i] = pod(ms5, i)
	}
	for _, i := range rand.Perm(5) {
		if err := procs[i].start(); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range procs {
		if err := p.waitServing(t.Context(), 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	members := func(p *proc) (adminapi.MemberList, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, ctlBin, "members", "list", "-o", "json")
		cmd.Env, cmd.Dir = p.env, p.dir
		var l adminapi.MemberList
		out, err := cmd.Output()
		if err == nil {
			err = json.Unmarshal(out, &l)
		}
		return l, err
	}
	// voters checks that l holds exactly the members of ordinals want, all
	// voters, one leading.
	voters := func(l adminapi.MemberList, want ...int) error {
		var ids, wantIDs []string
		leaders := 0
		for _, m := range l.Members {
			if m.Suffrage == "Voter" {
				ids = append(ids, m.ID)
			}
			if m.Leader {
				leaders++
			}
		}
		for _, i := range want {
			wantIDs = append(wantIDs, procs[i].name)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, wantIDs) || len(l.Members) != len(want) || leaders != 1 {
			return fmt.Errorf("members %+v, want voters %v and one leader", l.Members, wantIDs)
		}
		return nil
	}
	if err := poll(t.Context(), time.Minute, func() error {
		l, err := members(procs[0])
		if err != nil {
			return err
		}
		return voters(l, 0, 1, 2, 3, 4)
	}); err != nil {
		t.Fatal(err)
	}
	t.Log("five voters")

	// The upgrade to 3: Pods 4 and 3 go.
	for _, i := range []int{4, 3} {
		if !stop(procs[i].cmd, procs[i].done, 15*time.Second) {
			t.Fatalf("%s did not stop on SIGTERM", procs[i].name)
		}
	}
	upgraded := time.Now()
	var l adminapi.MemberList
	if err := poll(t.Context(), 90*time.Second, func() (err error) {
		if l, err = members(procs[0]); err != nil {
			return err
		}
		if err := voters(l, 0, 1, 2); err != nil {
			return err
		}
		var removed []string
		for _, r := range l.Removed {
			removed = append(removed, r.ID)
		}
		if want := []string{procs[3].name, procs[4].name}; !slices.Equal(removed, want) {
			return fmt.Errorf("removed %v, want %v", removed, want)
		}
		return nil
	}); err != nil {
		t.Fatalf("after scaling down to 3: %v", err)
	}
	t.Logf("three voters %s after the scale-down", time.Since(upgraded).Round(time.Second))
	for _, r := range l.Removed {
		if !strings.Contains(r.Reason, "dead") || r.At.IsZero() {
			t.Errorf("removal of %s: %+v", r.ID, r)
		}
	}
	// And every remaining member is ready.
	if err := poll(t.Context(), time.Minute, func() error {
		cmd := exec.CommandContext(t.Context(), ctlBin, "status", "-o", "json")
		cmd.Env, cmd.Dir = procs[0].env, procs[0].dir
		out, err := cmd.Output()
		var st statusOutput
		if err != nil || json.Unmarshal(out, &st) != nil {
			return fmt.Errorf("ctl status: %v\n%s", err, out)
		}
		ready := 0
		for _, m := range st.Members {
			if m.Status != nil && m.Status.Ready {
				ready++
			}
		}
		if len(st.Members) != 3 || ready != 3 {
			return fmt.Errorf("ctl status: %d members, %d ready:\n%s", len(st.Members), ready, out)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
