package member_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Issue 6, acceptance 4: a rolling restart of a 3-member cluster, one
// member after the other (the leader among them, which hands leadership
// over as it stops), under continuous writes through every member, loses
// no acknowledged write: each is on every member afterwards with the
// resourceVersion it was acknowledged with.
func TestRollingRestartLosesNoWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts three members under load")
	}
	c := membertest.StartCluster(t, 3, membertest.FastRaft)
	ctx := t.Context()
	if _, err := c.PlainClientset(0).CoreV1().Namespaces().Create(ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "roll"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sec, _, err := datadir.LoadSecrets(c.Config(0).DataDir)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := sec.CAPool()
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu     sync.Mutex
		acked  = map[string]string{} // name → acknowledged resourceVersion
		failed int
	)
	wctx, stopWriters := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for j := range 3 {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		defer tr.CloseIdleConnections()
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: c.Member(j).URL(), BearerToken: c.Token(),
			Transport: tr, QPS: -1, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for w := range 2 { // two writers per member
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; wctx.Err() == nil; k++ {
					name := fmt.Sprintf("m%d-w%d-%d", j, w, k)
					cm, err := cs.CoreV1().ConfigMaps("roll").Create(wctx, configMap(name, map[string]string{"k": name}), metav1.CreateOptions{})
					mu.Lock()
					if err == nil {
						acked[name] = cm.ResourceVersion
					} else {
						failed++ // a member restarting, an election: not acknowledged
					}
					mu.Unlock()
					if err != nil {
						time.Sleep(20 * time.Millisecond)
					}
				}
			}()
		}
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }

	for _, i := range []int{2, 1, 0} { // a StatefulSet's order
		before := count()
		membertest.Eventually(t, 20*time.Second, func() error { // writes go on between restarts
			if count() < before+30 {
				return fmt.Errorf("%d writes acknowledged since the last restart", count()-before)
			}
			return nil
		})
		wasLeader := c.Member(i).Store().IsLeader()
		c.Stop(i)
		c.Restart(i)
		t.Logf("restarted %s (leader: %v)", c.Config(i).ID, wasLeader)
		membertest.Eventually(t, 30*time.Second, func() error {
			l := c.Member(c.WaitLeader()).Store().Status()
			st := c.Member(i).Store().Status()
			if !c.Member(i).Store().Ready() || st.AppliedIndex+100 < l.AppliedIndex {
				return fmt.Errorf("%s not caught up: %+v, leader %+v", c.Config(i).ID, st, l)
			}
			return nil
		})
	}
	before := count()
	membertest.Eventually(t, 20*time.Second, func() error {
		if count() < before+30 {
			return fmt.Errorf("%d writes acknowledged after the last restart", count()-before)
		}
		return nil
	})
	stopWriters()
	wg.Wait()
	t.Logf("%d writes acknowledged, %d refused or failed", len(acked), failed)

	for i := range c.N() {
		l, err := c.PlainClientset(i).CoreV1().ConfigMaps("roll").List(ctx, metav1.ListOptions{}) // a consistent read
		if err != nil {
			t.Fatalf("list through %s: %v", c.Config(i).ID, err)
		}
		have := map[string]string{}
		for _, cm := range l.Items {
			have[cm.Name] = cm.ResourceVersion
		}
		lost := 0
		for name, rv := range acked {
			if have[name] != rv {
				if lost++; lost <= 5 {
					t.Errorf("%s: %s acknowledged at %s, has %q", c.Config(i).ID, name, rv, have[name])
				}
			}
		}
		if lost > 0 {
			t.Errorf("%s lost %d of %d acknowledged writes", c.Config(i).ID, lost, len(acked))
		}
	}
}
