package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"

	"github.com/litek8s/litek8s/bench/internal/report"
)

// loadAvg1 is the 1-minute load average from /proc/loadavg.
func loadAvg1() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/loadavg: %q", b)
	}
	return strconv.ParseFloat(f[0], 64)
}

// busyWarning is a warning when the machine is already loaded: figures
// measured next to other work are not comparable.
func busyWarning() string {
	l, err := loadAvg1()
	if err != nil || l <= float64(runtime.NumCPU())/2 {
		return ""
	}
	return fmt.Sprintf("the 1-minute load average is %.2f, above half of the %d CPUs: something else is running, figures will be low and noisy",
		l, runtime.NumCPU())
}

func machine() report.Machine {
	m := report.Machine{CPUs: runtime.NumCPU(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GoVersion: runtime.Version()}
	m.Hostname, _ = os.Hostname()
	m.LoadAvg1, _ = loadAvg1()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// heapLive forces a GC and returns the live heap and the memory the Go
// runtime holds from the OS (mapped, not released), for the whole
// process: every in-process member and the load clients.
func heapLive() (live, mapped uint64) {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64() - s[2].Value.Uint64()
}

// procStatus reads a field in kB of /proc/<pid>/status (VmRSS, VmHWM) in
// bytes.
func procStatus(pid int, field string) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && k == field {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}
