package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/test/proc"
)

// Issue 6, acceptance 2: a follower paused (SIGSTOP) under write load until
// the leader compacted the log it misses, then resumed (SIGCONT): the
// leader shows it lagging; it is not ready and serves no stale consistent
// read; its watchers get 410; it catches up through a snapshot install
// and becomes ready with every object.
func TestPausedFollowerResyncs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 3 member processes")
	}
	bin, ctl := proc.Build(t, "cmd/node"), proc.Build(t, "cmd/ctl")
	base := t.TempDir()
	flags := []string{"--snapshot-threshold", "100", "--trailing-logs", "50", "--snapshot-interval", "300ms",
		"--resync-lag-entries", "200", "--log-level", "info"}
	n1 := proc.MustStart(t, bin, "node-1", filepath.Join(base, "n1"), "127.0.0.1:0", "127.0.0.1:0", flags...)
	tok, err := os.ReadFile(filepath.Join(n1.Dir, "data", "tls", "join-token"))
	if err != nil {
		t.Fatal(err)
	}
	join := append([]string{"--join", n1.URL, "--join-token", string(tok)}, flags...)
	procs := []*proc.Proc{n1,
		proc.MustStart(t, bin, "node-2", filepath.Join(base, "n2"), "127.0.0.1:0", "127.0.0.1:0", join...),
		proc.MustStart(t, bin, "node-3", filepath.Join(base, "n3"), "127.0.0.1:0", "127.0.0.1:0", join...)}
	admin := n1.REST
	ctx := t.Context()

	status := func(p *proc.Proc) (adminapi.Status, error) {
		var st adminapi.Status
		code, err := p.Get(ctx, admin, "/admin/v1/status", &st)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("status of %s: HTTP %d", p.ID, code)
		}
		return st, err
	}
	var leader, follower *proc.Proc
	membertest.Eventually(t, 30*time.Second, func() error {
		leader, follower = nil, nil
		for _, p := range procs {
			st, err := status(p)
			if err != nil {
				return err
			}
			if !st.Ready {
				return fmt.Errorf("%s not ready", p.ID)
			}
			if st.Role == "Leader" {
				leader = p
			} else if follower == nil {
				follower = p
			}
		}
		if leader == nil {
			return errors.New("no leader")
		}
		return nil
	})
	lcs, fcs := leader.Clientset(admin), follower.Clientset(admin)
	if _, err := lcs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lag"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start, err := fcs.CoreV1().ConfigMaps("lag").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// the test's ConfigMaps only: the root CA publisher adds its own to the
	// namespace at any time
	w, err := fcs.CoreV1().ConfigMaps("lag").Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion,
		FieldSelector: "metadata.name!=kube-root-ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	before, err := status(follower)
	if err != nil {
		t.Fatal(err)
	}

	follower.Signal(syscall.SIGSTOP)
	paused := time.Now()
	t.Logf("paused %s at applied index %d; %s leads", follower.ID, before.AppliedIndex, leader.ID)
	acked := writeConfigMaps(t, ctx, lcs, "lag", 1000)

	// the leader compacted what the follower misses, and shows it lagging
	var lag adminapi.MemberLag
	membertest.Eventually(t, 30*time.Second, func() error {
		st, err := status(leader)
		if err != nil {
			return err
		}
		if st.SnapshotIndex < before.AppliedIndex+50+100 {
			return fmt.Errorf("leader's latest snapshot at %d, the paused follower applied %d", st.SnapshotIndex, before.AppliedIndex)
		}
		var lags adminapi.LagList
		if _, err := leader.Get(ctx, admin, "/admin/v1/lag", &lags); err != nil {
			return err
		}
		for _, l := range lags.Members {
			if l.ID == follower.ID {
				lag = l
			}
		}
		if lag.Entries < 1000 || lag.Seconds <= 0 {
			return fmt.Errorf("leader's lag of %s: %+v", follower.ID, lag)
		}
		return nil
	})
	t.Logf("leader: %s lags %d entries, %.1fs", follower.ID, lag.Entries, lag.Seconds)
	// ctl status says so too, and fails: the paused member does not answer
	out, err := exec.CommandContext(ctx, ctl, "--kubeconfig", filepath.Join(n1.Dir, "data", "kubeconfig"),
		"--server", leader.URL, "status", "-o", "json").Output()
	var st struct {
		Members []struct {
			ID         string              `json:"id"`
			LeaderView *adminapi.MemberLag `json:"leaderView"`
			Error      string              `json:"error"`
		} `json:"members"`
	}
	if jerr := json.Unmarshal(out, &st); err == nil || jerr != nil {
		t.Fatalf("ctl status with a paused member: %v (want exit 1), %v: %s", err, jerr, out)
	}
	for _, m := range st.Members {
		if m.ID == follower.ID && (m.LeaderView == nil || m.LeaderView.Entries < 1000 || m.Error == "") {
			t.Errorf("ctl status of the paused member: %+v", m)
		}
	}

	// a follower is ready for 2 s after the leader last said it was caught
	// up (raftstore's caughtUp): pause it longer than that
	time.Sleep(time.Until(paused.Add(3 * time.Second)))
	follower.Signal(syscall.SIGCONT)
	resumed := time.Now()
	// not ready at once: the leader has not said it caught up since
	if code, err := follower.Get(ctx, admin, "/readyz", nil); err != nil || code == http.StatusOK {
		t.Errorf("resumed follower's /readyz: %d %v, want not ready", code, err)
	}
	// a consistent read through it is never stale
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l, err := fcs.CoreV1().ConfigMaps("lag").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("consistent list through the resumed follower: %v", err)
			return
		}
		if missing := missingFrom(acked, l.Items); len(missing) > 0 {
			t.Errorf("consistent list through the resumed follower misses %d acknowledged writes (%v...)", len(missing), missing[:1])
		}
	}()
	// its watch ends with 410 Expired; before that it may deliver the
	// writes the follower had received before the pause and applies on
	// resuming (their AppendEntries wait in its socket), each one
	// acknowledged, in order
	timeout := time.After(30 * time.Second)
	var last int64
	applied := 0
watching:
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error && apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) {
				break watching
			}
			cm, isCM := ev.Object.(*corev1.ConfigMap)
			if !isCM || ev.Type != watch.Added {
				t.Errorf("watch on the resumed follower: %s %v, want ADDED ConfigMaps, then an ERROR 410", ev.Type, ev.Object)
				break watching
			}
			rv, err := strconv.ParseInt(cm.ResourceVersion, 10, 64)
			if err != nil || rv <= last || acked[cm.Name] != cm.ResourceVersion {
				t.Errorf("watch on the resumed follower: ADDED %s at %s after %d (acknowledged at %q)", cm.Name,
					cm.ResourceVersion, last, acked[cm.Name])
				break watching
			}
			last, applied = rv, applied+1
		case <-timeout:
			t.Error("the resumed follower's watch went on")
			break watching
		}
	}
	t.Logf("the resumed follower's watch: %d events it applied on resuming, then the end", applied)
	membertest.Eventually(t, 30*time.Second, func() error {
		code, err := follower.Get(ctx, admin, "/readyz", nil)
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("/readyz %d %v", code, err)
		}
		return nil
	})
	t.Logf("ready again %v after SIGCONT", time.Since(resumed).Round(time.Millisecond))
	wg.Wait()
	l, err := fcs.CoreV1().ConfigMaps("lag").List(ctx, metav1.ListOptions{ResourceVersion: "0"}) // its own data, no read index
	if err != nil {
		t.Fatal(err)
	}
	if missing := missingFrom(acked, l.Items); len(missing) > 0 {
		t.Errorf("the ready follower misses %d acknowledged writes", len(missing))
	}
	// Which came first decides whether the leader had to tell it: the
	// snapshot install (which ends the watches itself) or its lag report.
	log, _ := os.ReadFile(filepath.Join(follower.Dir, "err.log"))
	t.Logf("told to resync: %v", strings.Contains(string(log), "resyncing"))
}

// writeConfigMaps creates n ConfigMaps in ns with 8 clients and returns the
// acknowledged ones, name → resourceVersion. Any failure fails the test:
// the cluster keeps its quorum throughout.
func writeConfigMaps(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string, n int) map[string]string {
	t.Helper()
	var mu sync.Mutex
	acked := map[string]string{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < n; k += 8 {
				name := fmt.Sprintf("cm-%05d", k)
				cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
					Data: map[string]string{"k": name}}, metav1.CreateOptions{})
				if err != nil {
					t.Errorf("create %s: %v", name, err)
					return
				}
				mu.Lock()
				acked[name] = cm.ResourceVersion
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return acked
}

// missingFrom returns the acknowledged writes that items lack (or hold at
// another resourceVersion), sorted.
func missingFrom(acked map[string]string, items []corev1.ConfigMap) []string {
	have := make(map[string]string, len(items))
	for _, cm := range items {
		have[cm.Name] = cm.ResourceVersion
	}
	var out []string
	for name, rv := range acked {
		if have[name] != rv {
			out = append(out, name+"@"+rv)
		}
	}
	slices.Sort(out)
	return out
}
