package realcluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Leftovers lists what a realcluster in stateDir left on this machine: a
// process whose command line names stateDir, an iptables KUBE-* chain or
// rule, a mount under stateDir, the bridge, the dummy interface, a veth,
// a kubepods cgroup, or stateDir itself. After down.sh it is empty.
func Leftovers(stateDir string) []string {
	var left []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	self := fmt.Sprintf("/proc/%d/cmdline", os.Getpid())
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || p == self {
			continue
		}
		cmd := string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		if strings.Contains(cmd, stateDir) {
			left = append(left, "process "+filepath.Base(filepath.Dir(p))+": "+cmd)
		}
	}
	for _, ipt := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(ipt).Output()
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "KUBE-") || strings.Contains(line, "LITEK8S-RC") ||
				strings.Contains(line, "litek8s-realcluster") {
				left = append(left, ipt+": "+line)
			}
		}
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, stateDir) {
				left = append(left, "mount: "+line)
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "litek8s-") || strings.Contains(line, "veth") {
				left = append(left, "link: "+line)
			}
		}
	}
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	for _, c := range cgroups {
		left = append(left, "cgroup: "+c)
	}
	if _, err := os.Stat(stateDir); err == nil {
		left = append(left, "state dir: "+stateDir)
	}
	return left
}
