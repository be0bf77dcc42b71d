package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/litek8s/litek8s/bench/internal/report"
	"github.com/litek8s/litek8s/internal/member/adminapi"
)

// buildNode builds cmd/node into dir and returns the binary's path.
func buildNode(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	return buildCmd(ctx, dir, "node", stderr)
}

// buildCmd builds the module's cmd/<name> into dir and returns the
// binary's path.
func buildCmd(ctx context.Context, dir, name string, stderr io.Writer) (string, error) {
	bin := filepath.Join(dir, name)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/litek8s/litek8s/cmd/"+name)
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build cmd/%s (run api_load from inside the module): %w", name, err)
	}
	// Write the binary back to disk before it runs, as an installed one
	// (a package's, an image layer's) is: the page cache holds a freshly
	// written file as dirty pages for up to 30 s, and the kernel drops
	// only clean ones, so the members' periodic unmapping of their
	// executable's pages (memtrim) would leave them mapped in large
	// folios and count tens of MiB more in their RSS than in production.
	f, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("write %s back to disk: %w", bin, err)
	}
	return bin, nil
}

// ownBinary copies bin for the member id (next to it, synced as buildCmd
// syncs bin) and returns the copy's path. Members on separate machines
// map separate files; members of one file on one machine share its page
// cache, and the kernel's fault-around maps into a process, at each
// fault, the cached pages around the faulting one (up to 64 KiB): each
// member's RSS then held code only the others ran.
func ownBinary(bin, id string) (string, error) {
	own := bin + "-" + id
	src, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.OpenFile(own, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return "", fmt.Errorf("copy %s: %w", bin, err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return "", fmt.Errorf("write %s back to disk: %w", own, err)
	}
	return own, dst.Close()
}

// nodeProcs is members that are `node` processes (-processes): each has a
// process of its own, so its RSS and Go heap are its alone. The bench asks
// them over HTTP: the admin API (status, members), /metrics and
// /debug/pprof/, with the load's admin token.
type nodeProcs struct {
	procs []*nodeProc
	eps   []*endpoint // the cluster's, same indexes
	// extra are processes the ops start besides the members (a joiner, a
	// restored member: see ops.go), stopped by close too.
	extra []*nodeProc
}

// nodeProc is one member process.
type nodeProc struct {
	id   string
	bin  string
	args []string // as started: a restart starts bin with them again
	cmd  *exec.Cmd
	// apiAddr and raftAddr are the addresses the member printed it
	// serves on (set once startNode returned without error).
	apiAddr, raftAddr string
	done              chan struct{} // closed once the process was reaped
	err               error         // of Wait, once done is closed
}

// startProcesses starts cc.n processes of cc.nodeBin: member 0
// bootstraps with the load's admin and join tokens, the others join it.
// Each runs in a process group of its own (a terminal's Ctrl-C reaches
// the bench only, which stops them in order), and is killed by the kernel
// should the bench die without stopping it (Pdeathsig).
func (c *cluster) startProcesses(ctx context.Context, cc clusterConfig) error {
	ps := &nodeProcs{}
	c.members = ps
	for i := range cc.n {
		id := fmt.Sprintf("m%d", i)
		dataDir := filepath.Join(cc.dir, id)
		args := []string{"--id", id, "--data-dir", dataDir, "--api-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0",
			"--admin-token", adminToken, "--join-token", joinToken,
			"--simulated-nodes", strconv.Itoa(cc.simNodes), "--log-level", cc.logLevel}
		if i > 0 {
			args = append(args, "--join", c.eps[0].url)
		}
		bin, err := ownBinary(cc.nodeBin, id)
		if err != nil {
			return err
		}
		p, url, err := startNode(ctx, bin, id, args, cc.stderr)
		if p != nil {
			ps.procs = append(ps.procs, p)
		}
		if err != nil {
			return fmt.Errorf("start member %s: %w", id, err)
		}
		if i == 0 {
			if err := c.loadCredentials(filepath.Join(dataDir, "kubeconfig")); err != nil {
				return err
			}
		}
		c.eps = append(c.eps, newEndpoint(id, url, c.token, c.ca, cc.conns, cc.timeout))
		ps.eps = c.eps
	}
	return nil
}

// startupTimeout bounds how long a member process may take to print the
// line with its API URL.
const startupTimeout = 60 * time.Second

// startNode starts bin with args and returns the member's API URL from
// the line node prints once it serves ("litek8s member ID serving URL
// (raft …)"). A process it started is returned even on error, for the
// caller to stop.
func startNode(ctx context.Context, bin, id string, args []string, stderr io.Writer) (*nodeProc, string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = nodeEnv()
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	p := &nodeProc{id: id, bin: bin, args: args, cmd: cmd, done: make(chan struct{})}
	urls := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			// litek8s member ID serving URL (raft ADDR), VERSION
			f := strings.Fields(sc.Text())
			if len(f) >= 5 && f[0] == "litek8s" && f[1] == "member" && f[3] == "serving" {
				raft := ""
				if len(f) >= 7 && f[5] == "(raft" {
					raft = strings.TrimRight(f[6], "),")
				}
				select {
				case urls <- [2]string{f[4], raft}:
				default:
				}
			}
		}
		io.Copy(io.Discard, out) // a line too long for the scanner
		p.err = cmd.Wait()
		close(p.done)
	}()
	select {
	case u := <-urls:
		p.apiAddr, p.raftAddr = strings.TrimPrefix(u[0], "https://"), u[1]
		return p, u[0], nil
	case <-p.done:
		return p, "", fmt.Errorf("node exited before serving: %v", p.err)
	case <-time.After(startupTimeout):
		return p, "", fmt.Errorf("node did not print its URL within %v", startupTimeout)
	case <-ctx.Done():
		return p, "", context.Cause(ctx)
	}
}

// nodeEnv is the bench's environment without LITEK8S_* variables: node
// reads its configuration from them, and the members' must come from
// the bench's flags alone.
func nodeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LITEK8S_") {
			env = append(env, kv)
		}
	}
	return env
}

// stopTimeout is how long a member has to stop after SIGTERM before it is
// killed: Kubernetes' default grace period. A member with a long log since
// its last snapshot takes one as it stops (seconds at 1,000,000 objects).
const stopTimeout = 30 * time.Second

// stop sends SIGTERM to p's process group, SIGKILL after stopTimeout,
// and reaps p. A member that exited before, or did not stop cleanly, is
// an error.
func (p *nodeProc) stop() error {
	select {
	case <-p.done:
		return fmt.Errorf("member %s exited before it was stopped: %v", p.id, p.err)
	default:
	}
	pgid := p.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("member %s: %w", p.id, p.err)
		}
		return nil
	case <-time.After(stopTimeout):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("member %s did not stop within %v of SIGTERM: killed", p.id, stopTimeout)
	}
}

// kill kills the member with SIGKILL (no snapshot as it stops, no clean
// close of its log: its next start replays the log since its last
// snapshot) and waits until it was reaped.
func (p *nodeProc) kill() error {
	select {
	case <-p.done:
		return fmt.Errorf("member %s exited before it was killed: %v", p.id, p.err)
	default:
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
	return nil
}

func (ps *nodeProcs) leader(ctx context.Context) (int, bool) {
	for i := range ps.procs {
		if i >= len(ps.eps) {
			break
		}
		var st adminapi.Status
		if err := getJSON(ctx, ps.eps[i], adminapi.PathStatus, &st); err == nil && st.Role == "Leader" {
			return i, true
		}
	}
	return 0, false
}

func (ps *nodeProcs) raftMembers(ctx context.Context, l int) (int, error) {
	var ml adminapi.MemberList
	if err := getJSON(ctx, ps.eps[l], adminapi.PathMembers+"?"+adminapi.QueryLocal+"=true", &ml); err != nil {
		return 0, err
	}
	return len(ml.Members), nil
}

// resyncs sums litek8s_controller_resyncs_total over the members' /metrics.
func (ps *nodeProcs) resyncs(ctx context.Context) (uint64, error) {
	var n uint64
	var buf bytes.Buffer
	for _, ep := range ps.eps {
		if err := ep.do(ctx, call{method: http.MethodGet, path: "/metrics", accept: "text/plain"}, &buf); err != nil {
			return 0, err
		}
		for line := range strings.Lines(buf.String()) {
			if !strings.HasPrefix(line, "litek8s_controller_resyncs_total") {
				continue
			}
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				return 0, fmt.Errorf("%s /metrics: %q: %w", ep.name, line, err)
			}
			n += uint64(v)
		}
	}
	return n, nil
}

// close stops the ops' extra processes, then the members, the last
// first (member 0 bootstrapped).
func (ps *nodeProcs) close() error {
	var errs []error
	for _, p := range ps.extra {
		errs = append(errs, p.stop())
	}
	ps.extra = nil
	for i := len(ps.procs) - 1; i >= 0; i-- {
		errs = append(errs, ps.procs[i].stop())
	}
	ps.procs = nil
	return errors.Join(errs...)
}

// getJSON GETs path from ep and decodes the answer into v.
func getJSON(ctx context.Context, ep *endpoint, path string, v any) error {
	var buf bytes.Buffer
	if err := ep.do(ctx, call{method: http.MethodGet, path: path}, &buf); err != nil {
		return err
	}
	if err := json.Unmarshal(buf.Bytes(), v); err != nil {
		return fmt.Errorf("GET %s%s: %w", ep.name, path, err)
	}
	return nil
}

// memory reads every member's memory figures: its /proc/PID/status first,
// then the Go runtime's from its heap profile after a GC (gc=1), so that
// the request and the GC do not change the RSS read. when says when in the
// run ("after fill", "end").
func (ps *nodeProcs) memory(ctx context.Context, when string) ([]report.MemberMemory, error) {
	var out []report.MemberMemory
	var buf bytes.Buffer
	for i, p := range ps.procs {
		m := report.MemberMemory{Member: p.id, When: when}
		pid := p.cmd.Process.Pid
		for _, f := range []struct {
			key string
			to  *uint64
		}{{"VmRSS", &m.VmRSS}, {"VmHWM", &m.VmHWM}, {"RssAnon", &m.RssAnon}, {"RssFile", &m.RssFile}} {
			v, err := procStatus(pid, f.key)
			if err != nil {
				return nil, fmt.Errorf("member %s: %w", p.id, err)
			}
			*f.to = v
		}
		if err := ps.eps[i].do(ctx, call{method: http.MethodGet, path: "/debug/pprof/heap?debug=1&gc=1", accept: "text/plain"}, &buf); err != nil {
			return nil, err
		}
		if err := parseMemStats(buf.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("member %s heap profile: %w", p.id, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// parseMemStats reads the "# runtime.MemStats" lines that end a text heap
// profile (debug=1): "# HeapAlloc = 123", "# Stack = inuse / sys" and so
// on.
func parseMemStats(b []byte, m *report.MemberMemory) error {
	fields := map[string]*uint64{"HeapAlloc": &m.HeapLive, "HeapInuse": &m.HeapInuse, "Stack": &m.StackInuse,
		"Sys": &m.GoSys, "NextGC": &m.NextGC}
	found := 0
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "# "), " = ")
		to, want := fields[k]
		if !ok || !want {
			continue
		}
		v, _, _ = strings.Cut(v, " / ")
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q: %w", line, err)
		}
		*to = n
		found++
	}
	if found != len(fields) {
		return fmt.Errorf("%d of the 5 runtime.MemStats lines HeapAlloc, HeapInuse, Stack, Sys, NextGC", found)
	}
	return nil
}

// saveHeapProfiles writes, for each member, its mappings
// (dir/<member>-smaps, /proc/<pid>/smaps: which mapping holds the RSS), then
// its heap profile after a GC, as dir/<member>-heap.pb.gz (for `go tool
// pprof`) and as text (dir/<member>-heap.txt, which ends with the
// runtime's MemStats: stacks, GC metadata, free pages not yet released).
func (ps *nodeProcs) saveHeapProfiles(ctx context.Context, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	var paths []string
	for i, p := range ps.procs {
		smaps, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", p.cmd.Process.Pid))
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", p.id, err)
		}
		files := []struct {
			name string
			get  func() ([]byte, error)
		}{
			{"-smaps", func() ([]byte, error) { return smaps, nil }},
			{"-heap.pb.gz", func() ([]byte, error) {
				err := ps.eps[i].do(ctx, call{method: http.MethodGet, path: "/debug/pprof/heap?gc=1",
					accept: "application/octet-stream"}, &buf)
				return buf.Bytes(), err
			}},
			{"-heap.txt", func() ([]byte, error) {
				err := ps.eps[i].do(ctx, call{method: http.MethodGet, path: "/debug/pprof/heap?debug=1",
					accept: "text/plain"}, &buf)
				return buf.Bytes(), err
			}},
		}
		for _, f := range files {
			b, err := f.get()
			if err != nil {
				return nil, fmt.Errorf("member %s: %w", p.id, err)
			}
			path := filepath.Join(dir, p.id+f.name)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				return nil, err
			}
			paths = append(paths, path)
		}
	}
	return paths, nil
}
