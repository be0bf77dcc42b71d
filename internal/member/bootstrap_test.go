package member_test

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// freeAddrs returns n loopback addresses whose ports were free a moment
// ago: members started with --bootstrap-expect must know each other's
// addresses before they start.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ln.Addr().String())
		ln.Close()
	}
	return out
}

// bootstrapConfigs are n fresh members that know each other's API URLs
// and expect n members.
func bootstrapConfigs(t *testing.T, n int) []member.Config {
	base := t.TempDir()
	addrs := freeAddrs(t, n)
	var peers []string
	for _, a := range addrs {
		peers = append(peers, "https://"+a)
	}
	var cfgs []member.Config
	for i := range n {
		cfg := member.DefaultConfig()
		cfg.ID = fmt.Sprintf("b%d", i)
		cfg.DataDir = filepath.Join(base, cfg.ID)
		cfg.APIAddr = addrs[i]
		cfg.Store.RaftAddr = "127.0.0.1:0"
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		membertest.FastRaft(&cfg)
		cfg.BootstrapExpect, cfg.Peers, cfg.JoinToken = n, peers, membertest.JoinToken
		cfgs = append(cfgs, cfg)
	}
	return cfgs
}

// Issue 6, acceptance 1 (first part): three fresh members started with
// bootstrap-expect 3, in random order and at random moments, form exactly
// one cluster; a member restarted with its data dir and the same flags
// rejoins it; a member with another cluster's data refuses to start.
func TestBootstrapExpect(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	cfgs := bootstrapConfigs(t, 3)
	members := make([]*member.Member, len(cfgs))
	defer func() {
		for _, m := range members {
			if m != nil {
				m.Close()
			}
		}
		membertest.CheckGoroutines(t, goroutines)
	}()
	order := rand.Perm(len(cfgs))
	t.Logf("start order %v", order)
	var wg sync.WaitGroup
	errs := make([]error, len(cfgs))
	for k, i := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(k)*300*time.Millisecond + rand.N(300*time.Millisecond))
			members[i], errs[i] = member.Start(t.Context(), cfgs[i])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %s: %v", cfgs[i].ID, err)
		}
	}
	want := []string{"b0", "b1", "b2"}
	membertest.Eventually(t, 20*time.Second, func() error {
		for i, m := range members {
			ms, err := m.Store().Members()
			if err != nil {
				return err
			}
			var ids []string
			for _, x := range ms {
				ids = append(ids, x.ID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, want) {
				return fmt.Errorf("%s sees members %v", cfgs[i].ID, ids)
			}
		}
		return nil
	})
	// one cluster: one CA, one leader, the same term everywhere
	var clusters, leaders []string
	for i, m := range members {
		sec, _, err := datadir.LoadSecrets(cfgs[i].DataDir)
		if err != nil {
			t.Fatal(err)
		}
		clusters = append(clusters, sec.ClusterID())
		st := m.Store().Status()
		leaders = append(leaders, st.LeaderID)
	}
	if clusters[0] == "" || clusters[0] != clusters[1] || clusters[1] != clusters[2] {
		t.Fatalf("cluster IDs %v", clusters)
	}
	if leaders[0] == "" || leaders[0] != leaders[1] || leaders[1] != leaders[2] {
		t.Fatalf("leaders %v", leaders)
	}

	// a restart with the same flags rejoins (on the same addresses, as a
	// StatefulSet's stable names give)
	cfgs[2].Store.RaftAddr = members[2].Store().RaftAddr()
	members[2].Close()
	members[2] = nil
	var err error
	if members[2], err = member.Start(t.Context(), cfgs[2]); err != nil {
		t.Fatalf("restart with the same flags: %v", err)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		if st := members[2].Store().Status(); st.LeaderID == "" || st.AppliedIndex < members[0].Store().Status().AppliedIndex {
			return fmt.Errorf("restarted member: %+v", st)
		}
		return nil
	})

	// another cluster's data with these peers refuses to start
	other := member.DefaultConfig()
	other.ID, other.DataDir = "stranger", t.TempDir()
	other.APIAddr, other.Store.RaftAddr = "127.0.0.1:0", "127.0.0.1:0"
	other.Logger = cfgs[0].Logger
	membertest.FastRaft(&other)
	m, err := member.Start(t.Context(), other)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	other.Peers, other.APIAddr = cfgs[0].Peers, strings.TrimPrefix(m.URL(), "https://")
	if m, err := member.Start(t.Context(), other); err == nil {
		m.Close()
		t.Fatal("a member of another cluster started with these peers")
	} else if !strings.Contains(err.Error(), "belongs to cluster") {
		t.Fatalf("want a clear refusal, got: %v", err)
	}
}

// Members advertised by DNS name (what a StatefulSet's stable names give):
// their certificates carry the names, Raft's configuration keeps them (it
// outlives pod IPs), and they form a cluster.
func TestAdvertisedNames(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	api, raftAddrs := freeAddrs(t, 2), freeAddrs(t, 2)
	name := func(addr string) string { _, port, _ := net.SplitHostPort(addr); return "localhost:" + port }
	var members []*member.Member
	defer func() {
		for _, m := range members {
			m.Close()
		}
		membertest.CheckGoroutines(t, goroutines)
	}()
	for i := range 2 {
		cfg := member.DefaultConfig()
		cfg.ID, cfg.DataDir = fmt.Sprintf("n%d", i), filepath.Join(t.TempDir(), "d")
		cfg.APIAddr, cfg.APIAdvertise = api[i], name(api[i])
		cfg.Store.RaftAddr, cfg.Store.RaftAdvertise = raftAddrs[i], name(raftAddrs[i])
		cfg.Logger, cfg.JoinToken = slog.New(slog.NewTextHandler(io.Discard, nil)), membertest.JoinToken
		membertest.FastRaft(&cfg)
		if i > 0 {
			cfg.Join = members[0].URL()
		}
		m, err := member.Start(t.Context(), cfg)
		if err != nil {
			t.Fatalf("start %s: %v", cfg.ID, err)
		}
		members = append(members, m)
	}
	membertest.Eventually(t, 20*time.Second, func() error {
		ms, err := members[0].Store().Members()
		if err != nil {
			return err
		}
		if len(ms) != 2 {
			return fmt.Errorf("members %+v", ms)
		}
		for _, m := range ms {
			if !strings.HasPrefix(m.RaftAddr, "localhost:") || !strings.HasPrefix(m.APIURL, "https://localhost:") {
				return fmt.Errorf("member %+v is not known by name", m)
			}
		}
		if !members[1].Store().Ready() {
			return fmt.Errorf("the joiner is not ready")
		}
		return nil
	})
}
