package ops

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/litek8s/litek8s/internal/member/membertest"
	"github.com/litek8s/litek8s/test/proc"
)

// Issue 4, target 9: a member releases what only its start-up used
// (--release-startup-memory); one started with 0 keeps it. The released
// member holds far fewer pages of its executable and still serves.
func TestReleaseStartupMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 2 member processes")
	}
	bin := proc.Build(t, "cmd/node")
	base := t.TempDir()
	kept := proc.MustStart(t, bin, "kept", filepath.Join(base, "kept"), "127.0.0.1:0", "127.0.0.1:0",
		"--release-startup-memory", "0")
	released := proc.MustStart(t, bin, "released", filepath.Join(base, "released"), "127.0.0.1:0", "127.0.0.1:0",
		"--release-startup-memory", "500ms", "--log-level", "info")

	logged := regexp.MustCompile(`msg="released start-up memory" rss_before_mib=(\d+) rss_after_mib=(\d+) executable_unmapped_mib=(\d+)`)
	var m []string
	membertest.Eventually(t, 20*time.Second, func() error {
		b, err := os.ReadFile(filepath.Join(released.Dir, "err.log"))
		if err != nil {
			return err
		}
		if m = logged.FindStringSubmatch(string(b)); m == nil {
			return fmt.Errorf("no release logged yet")
		}
		return nil
	})
	t.Logf("released: %s", m[0])
	if unmapped, _ := strconv.Atoi(m[3]); unmapped < 8 {
		t.Errorf("unmapped %d MiB of the executable, want at least 8", unmapped)
	}

	k, r := rssFile(t, kept.Pid()), rssFile(t, released.Pid())
	t.Logf("RssFile after the release: kept %d KiB, released %d KiB", k>>10, r>>10)
	if r*2 > k {
		t.Errorf("the released member maps %d KiB of files, the one that kept start-up memory %d KiB: want less than half", r>>10, k>>10)
	}

	// It still serves: what runs again is mapped back.
	for _, p := range []*proc.Proc{kept, released} {
		cs := p.Clientset(p.REST)
		if _, err := cs.CoreV1().ConfigMaps("default").Create(t.Context(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "after-release"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: create after release: %v", p.ID, err)
		}
		l, err := cs.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{})
		if err != nil || !slices.ContainsFunc(l.Items, func(c corev1.ConfigMap) bool { return c.Name == "after-release" }) {
			t.Fatalf("%s: list after release: %v", p.ID, err)
		}
	}
	t.Logf("RssFile after a create and a list: kept %d KiB, released %d KiB", rssFile(t, kept.Pid())>>10, rssFile(t, released.Pid())>>10)
}

// rssFile reads RssFile of process pid, in bytes.
func rssFile(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Fatalf("no RssFile in /proc/%d/status", pid)
	return 0
}
