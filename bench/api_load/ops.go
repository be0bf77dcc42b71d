package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/litek8s/litek8s/bench/internal/report"
	"github.com/litek8s/litek8s/internal/member/adminapi"
)

// The operations -ops runs on the member processes after the scenarios,
// in this order (issue 20: restart, join, backup round trip; kill: a
// restart that replays the Raft log).
const (
	opRestart  = "restart"
	opKill     = "kill"
	opJoin     = "join"
	opSnapshot = "snapshot"
)

var opNames = []string{opRestart, opKill, opJoin, opSnapshot}

// parseOps parses -ops: names separated by commas, or all; the result is
// in opNames' order, each once.
func parseOps(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "all":
			return slices.Clone(opNames), nil
		case !slices.Contains(opNames, name):
			return nil, fmt.Errorf("-ops: unknown op %q (want all or some of %s)", name, strings.Join(opNames, ", "))
		case !slices.Contains(out, name):
			out = append(out, name)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(opNames, a) - slices.Index(opNames, b) })
	return out, nil
}

// runOps runs the selected ops in order and records their figures; any
// op that fails ends the run. Every process an op starts is in the
// nodeProcs (stopped by the cluster's close on error or Ctrl-C) until
// the op stopped it.
func (b *bench) runOps(ctx context.Context, ops []string) error {
	ps, ok := b.cl.members.(*nodeProcs)
	if !ok || len(ops) == 0 {
		return nil
	}
	b.rep.Ops = &report.Ops{}
	for _, op := range ops {
		if err := b.refresh(ctx); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		ref, err := b.reference(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		fmt.Fprintf(b.stderr, "op %s\n", op)
		switch op {
		case opRestart:
			b.rep.Ops.Restart, err = b.opRestart(ctx, ps, ref, b.follower, (*nodeProc).stop)
		case opKill:
			b.rep.Ops.Kill, err = b.opRestart(ctx, ps, ref, b.otherFollower(), (*nodeProc).kill)
		case opJoin:
			b.rep.Ops.Join, err = b.opJoin(ctx, ps, ref)
		case opSnapshot:
			b.rep.Ops.Snapshot, err = b.opSnapshot(ctx, ps, ref)
		}
		if err != nil {
			return fmt.Errorf("op %s: %w", op, err)
		}
	}
	return nil
}

// objectRef is a list object and its resourceVersion on the leader: a
// member whose own store answers it (and every object) holds the data.
type objectRef struct{ name, rv string }

// reference reads the last list object from the leader (a consistent GET).
func (b *bench) reference(ctx context.Context) (objectRef, error) {
	name := fmt.Sprintf("cm-%06d", b.opts.objects-1)
	var buf bytes.Buffer
	if err := b.leader.do(ctx, call{method: http.MethodGet, path: cmPath(listNS) + "/" + name}, &buf); err != nil {
		return objectRef{}, err
	}
	rv, err := checkObject(buf.Bytes(), listNS, name)
	return objectRef{name: name, rv: rv}, err
}

// otherFollower is a follower other than the one restart restarts when
// there is one (the one restart stopped snapshotted as it stopped: killed,
// it would have little log to replay).
func (b *bench) otherFollower() *endpoint {
	for _, ep := range slices.Backward(b.cl.eps) {
		if ep != b.leader && ep != b.follower {
			return ep
		}
	}
	return b.follower
}

// opRestart stops follower f (stop: SIGTERM, or kill: SIGKILL) and starts
// it again with the same flags and data dir, on the API and Raft addresses
// it had (so it keeps its Raft ID and address), and times it.
func (b *bench) opRestart(ctx context.Context, ps *nodeProcs, ref objectRef, f *endpoint, stop func(*nodeProc) error) (*report.RestartOp, error) {
	i := slices.Index(b.cl.eps, f)
	if f == nil || i < 0 {
		return nil, errors.New("no follower to restart (-members 1)")
	}
	old, ep := ps.procs[i], b.cl.eps[i]
	args := withAddrs(old.args, old.apiAddr, old.raftAddr)
	r := &report.RestartOp{Member: old.id}
	t0 := time.Now()
	if err := stop(old); err != nil {
		return nil, fmt.Errorf("stop: %w", err)
	}
	r.StopMs = ms(time.Since(t0))
	ep.tr.CloseIdleConnections()
	t0 = time.Now()
	p, _, err := startNode(ctx, old.bin, old.id, args, b.stderr)
	if p != nil {
		ps.procs[i] = p // stopped by close from now on
	}
	if err != nil {
		return nil, fmt.Errorf("start %s again: %w", old.id, err)
	}
	r.ServingMs = ms(time.Since(t0))
	if p.apiAddr != old.apiAddr || p.raftAddr != old.raftAddr {
		return nil, fmt.Errorf("%s came back on API %s, Raft %s: want %s, %s", old.id, p.apiAddr, p.raftAddr, old.apiAddr, old.raftAddr)
	}
	if r.ReadyMs, err = b.waitReady(ctx, ep, t0); err != nil {
		return nil, err
	}
	if r.DataMs, r.Items, err = b.waitData(ctx, ep, ref, t0); err != nil {
		return nil, err
	}
	ml, err := b.members(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(ml.Members, func(m adminapi.MemberInfo) bool {
		return m.ID == old.id && m.RaftAddr == old.raftAddr && m.APIURL == ep.url && m.Suffrage == "Voter"
	}) {
		return nil, fmt.Errorf("the configuration after the restart is %+v: want %s a voter at %s, %s", ml.Members, old.id, old.raftAddr, ep.url)
	}
	if r.VmRSS, err = procStatus(p.cmd.Process.Pid, "VmRSS"); err != nil {
		return nil, err
	}
	fmt.Fprintf(b.stderr, "restarted %s: serving after %.0f ms, ready %.0f ms, every object %.0f ms\n", r.Member, r.ServingMs, r.ReadyMs, r.DataMs)
	return r, nil
}

// withAddrs returns args with the values of --api-addr and --raft-addr
// replaced.
func withAddrs(args []string, api, raft string) []string {
	out := slices.Clone(args)
	for i := 0; i+1 < len(out); i++ {
		switch out[i] {
		case "--api-addr":
			out[i+1] = api
		case "--raft-addr":
			out[i+1] = raft
		}
	}
	return out
}

// opJoin starts a member with an empty data dir that joins member 0 and
// times it until it votes and holds every object; then removes it from
// the cluster, stops it and deletes its data dir.
func (b *bench) opJoin(ctx context.Context, ps *nodeProcs, ref objectRef) (_ *report.JoinOp, err error) {
	id := fmt.Sprintf("m%d", len(ps.procs))
	dataDir := filepath.Join(b.tmp, "join-"+id)
	args := []string{"--id", id, "--data-dir", dataDir, "--api-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0",
		"--admin-token", adminToken, "--join-token", joinToken,
		"--simulated-nodes", strconv.Itoa(b.opts.simNodes), "--log-level", b.opts.logLevel, "--join", b.cl.eps[0].url}
	j := &report.JoinOp{Member: id}
	t0 := time.Now()
	p, url, err := ps.startExtra(ctx, b.nodeBin, id, args, b.stderr)
	defer func() { err = errors.Join(err, ps.stopExtra(p), os.RemoveAll(dataDir)) }()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", id, err)
	}
	j.ServingMs = ms(time.Since(t0))
	ep := newEndpoint(id, url, b.cl.token, b.cl.ca, 1, b.opts.timeout)
	defer ep.tr.CloseIdleConnections()
	err = b.pollOp(ctx, "the leader's Raft configuration to have "+id+" as a voter", func() error {
		ml, err := b.members(ctx)
		if err != nil {
			return err
		}
		if i := slices.IndexFunc(ml.Members, func(m adminapi.MemberInfo) bool { return m.ID == id }); i < 0 || ml.Members[i].Suffrage != "Voter" {
			return fmt.Errorf("%s not a voter: %+v", id, ml.Members)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	j.VoterMs = ms(time.Since(t0))
	if j.DataMs, j.Items, err = b.waitData(ctx, ep, ref, t0); err != nil {
		return nil, err
	}
	if j.VmRSS, err = procStatus(p.cmd.Process.Pid, "VmRSS"); err != nil {
		return nil, err
	}
	if j.SnapshotsInstalled, j.SnapshotInstallMs, err = restores(ctx, ep); err != nil {
		return nil, err
	}
	if j.SnapshotsInstalled > 0 {
		if j.SnapshotBytes, err = snapshotBytes(filepath.Join(dataDir, "snapshots")); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(b.stderr, "join %s: voter after %.0f ms, every object %.0f ms, %d snapshots installed\n", id, j.VoterMs, j.DataMs, j.SnapshotsInstalled)
	if j.RemoveMs, err = b.removeMember(ctx, id); err != nil {
		return nil, err
	}
	return j, nil
}

// members is the leader's Raft configuration.
func (b *bench) members(ctx context.Context) (adminapi.MemberList, error) {
	var ml adminapi.MemberList
	err := getJSON(ctx, b.leader, adminapi.PathMembers, &ml)
	return ml, err
}

// removeMember removes id from the cluster through the leader and waits
// until the configuration has the cluster's members only.
func (b *bench) removeMember(ctx context.Context, id string) (float64, error) {
	t0 := time.Now()
	c := call{method: http.MethodDelete, path: adminapi.PathMembers + "/" + id}
	if err := b.leader.do(ctx, c, nil); err != nil {
		return 0, fmt.Errorf("remove %s: %w", id, err)
	}
	err := b.pollOp(ctx, "the configuration to be the cluster's members again", func() error {
		ml, err := b.members(ctx)
		if err != nil {
			return err
		}
		if len(ml.Members) != b.opts.members || slices.ContainsFunc(ml.Members, func(m adminapi.MemberInfo) bool { return m.ID == id }) {
			return fmt.Errorf("configuration %+v", ml.Members)
		}
		return nil
	})
	return ms(time.Since(t0)), err
}

// restores reads how many snapshots the member installed and their time
// from its litek8s_raft_restore_duration_seconds histogram.
func restores(ctx context.Context, ep *endpoint) (int, float64, error) {
	var buf bytes.Buffer
	if err := ep.do(ctx, call{method: http.MethodGet, path: "/metrics", accept: "text/plain"}, &buf); err != nil {
		return 0, 0, err
	}
	var n, sum float64
	var found int
	for line := range strings.Lines(buf.String()) {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		to := map[string]*float64{"litek8s_raft_restore_duration_seconds_count": &n,
			"litek8s_raft_restore_duration_seconds_sum": &sum}[f[0]]
		if to == nil {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s /metrics: %q: %w", ep.name, line, err)
		}
		*to = v
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("%s /metrics: no litek8s_raft_restore_duration_seconds", ep.name)
	}
	return int(n), sum * 1000, nil
}

// snapshotBytes is the size of the largest snapshot (state.bin) under
// dir, a Raft file snapshot store.
func snapshotBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "state.bin" {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n = max(n, fi.Size())
		}
		return err
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("no snapshot under %s", dir)
	}
	return n, err
}

// opSnapshot saves a backup from a follower with `ctl snapshot save`,
// restores it into an empty data dir with `ctl snapshot restore`, starts
// a member on it and times each step; then stops that member and
// deletes the backup and the data dir.
func (b *bench) opSnapshot(ctx context.Context, ps *nodeProcs, ref objectRef) (_ *report.SnapshotOp, err error) {
	ctlBin, err := buildCmd(ctx, b.tmp, "ctl", b.stderr)
	if err != nil {
		return nil, err
	}
	ep := b.follower
	if ep == nil {
		ep = b.leader
	}
	file, dataDir := filepath.Join(b.tmp, "backup.litek8s"), filepath.Join(b.tmp, "restore-r0")
	defer func() { err = errors.Join(err, os.RemoveAll(file), os.RemoveAll(file+".tmp"), os.RemoveAll(dataDir)) }()
	s := &report.SnapshotOp{Member: ep.name}
	var saved snapshotOutput
	t0 := time.Now()
	if err := runCtl(ctx, ctlBin, &saved, "snapshot", "save", file, "--kubeconfig", filepath.Join(b.tmp, "cluster", "m0", "kubeconfig"),
		"--server", ep.url, "--cache-dir="); err != nil {
		return nil, err
	}
	s.SaveMs = ms(time.Since(t0))
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	s.FileBytes, s.Index, s.Objects = fi.Size(), saved.Index, saved.Objects
	if saved.Size != fi.Size() || saved.Objects < b.opts.objects {
		return nil, fmt.Errorf("ctl snapshot save: %+v, file of %d bytes: want its size and at least %d objects", saved, fi.Size(), b.opts.objects)
	}
	raftAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	var restored snapshotOutput
	t0 = time.Now()
	if err := runCtl(ctx, ctlBin, &restored, "snapshot", "restore", file, "--data-dir", dataDir, "--id", "r0",
		"--raft-addr", raftAddr, "--admin-token", adminToken); err != nil {
		return nil, err
	}
	s.RestoreMs = ms(time.Since(t0))
	if restored.Index != saved.Index {
		return nil, fmt.Errorf("ctl snapshot restore: index %d, the backup's is %d", restored.Index, saved.Index)
	}
	args := []string{"--id", "r0", "--data-dir", dataDir, "--api-addr", "127.0.0.1:0", "--raft-addr", raftAddr,
		"--simulated-nodes", strconv.Itoa(b.opts.simNodes), "--log-level", b.opts.logLevel}
	t0 = time.Now()
	p, url, err := ps.startExtra(ctx, b.nodeBin, "r0", args, b.stderr)
	defer func() { err = errors.Join(err, ps.stopExtra(p)) }()
	if err != nil {
		return nil, fmt.Errorf("start r0 on the restored data dir: %w", err)
	}
	s.ServingMs = ms(time.Since(t0))
	// a restored cluster has new secrets: its CA is in its kubeconfig
	var rc cluster
	if err := rc.loadCredentials(filepath.Join(dataDir, "kubeconfig")); err != nil {
		return nil, err
	}
	rep := newEndpoint("r0", url, rc.token, rc.ca, 1, b.opts.timeout)
	defer rep.tr.CloseIdleConnections()
	if s.ReadyMs, err = b.waitReady(ctx, rep, t0); err != nil {
		return nil, err
	}
	if s.DataMs, s.Items, err = b.waitData(ctx, rep, ref, t0); err != nil {
		return nil, err
	}
	if s.VmRSS, err = procStatus(p.cmd.Process.Pid, "VmRSS"); err != nil {
		return nil, err
	}
	fmt.Fprintf(b.stderr, "snapshot: saved %.1f MiB in %.0f ms, restored in %.0f ms, r0 has every object %.0f ms after its start\n",
		mib(uint64(s.FileBytes)), s.SaveMs, s.RestoreMs, s.DataMs)
	return s, nil
}

// snapshotOutput is what `ctl snapshot save|restore -o json` prints.
type snapshotOutput struct {
	File    string `json:"file"`
	Index   uint64 `json:"index"`
	Objects int    `json:"objects"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	DataDir string `json:"dataDir"`
}

// runCtl runs ctl with args and -o json and decodes its output into v;
// a non-zero exit is an error with ctl's stderr.
func runCtl(ctx context.Context, bin string, v any, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, append(args, "-o", "json")...)
	cmd.Env = nodeEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		return fmt.Errorf("ctl %s: %w: %q", strings.Join(args, " "), err, out.String())
	}
	return nil
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago
// (listened on with port 0, then closed): for a flag that must name the
// port before the process that listens on it starts.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// startExtra starts a node process besides the members; close stops it
// until stopExtra does.
func (ps *nodeProcs) startExtra(ctx context.Context, bin, id string, args []string, stderr io.Writer) (*nodeProc, string, error) {
	bin, err := ownBinary(bin, id)
	if err != nil {
		return nil, "", err
	}
	p, url, err := startNode(ctx, bin, id, args, stderr)
	if p != nil {
		ps.extra = append(ps.extra, p)
	}
	return p, url, err
}

// stopExtra stops p, started by startExtra (nil: nothing to do).
func (ps *nodeProcs) stopExtra(p *nodeProc) error {
	if p == nil || !slices.Contains(ps.extra, p) {
		return nil
	}
	ps.extra = slices.DeleteFunc(ps.extra, func(x *nodeProc) bool { return x == p })
	return p.stop()
}

// pollOp polls f until it succeeds, for at most -timeout.
func (b *bench) pollOp(ctx context.Context, what string, f func() error) error {
	if err := poll(ctx, b.opts.timeout, f); err != nil {
		return fmt.Errorf("waiting for %s (-timeout %v): %w", what, b.opts.timeout, err)
	}
	return nil
}

// waitReady waits until ep's /readyz answers 200 and returns the time
// since t0 in ms.
func (b *bench) waitReady(ctx context.Context, ep *endpoint, t0 time.Time) (float64, error) {
	err := b.pollOp(ctx, ep.name+"'s /readyz", func() error {
		return ep.do(ctx, call{method: http.MethodGet, path: "/readyz"}, nil)
	})
	return ms(time.Since(t0)), err
}

// waitData waits until ep's own store holds every list object: a GET of
// ref with resourceVersion=0 (served from the member's store) answers
// ref's resourceVersion, then a resourceVersion=0 list of the list
// namespace has every object. It returns the time since t0 in ms and the
// list's item count.
func (b *bench) waitData(ctx context.Context, ep *endpoint, ref objectRef, t0 time.Time) (float64, int, error) {
	want := listed(b.opts.objects)
	var items int
	var buf bytes.Buffer
	err := b.pollOp(ctx, ep.name+" to hold every object", func() error {
		if err := ep.do(ctx, call{method: http.MethodGet, path: cmPath(listNS) + "/" + ref.name + "?resourceVersion=0"}, &buf); err != nil {
			return err
		}
		rv, err := checkObject(buf.Bytes(), listNS, ref.name)
		if err != nil {
			return err
		}
		if rv != ref.rv {
			return fmt.Errorf("%s has %s at resourceVersion %s, the leader at %s", ep.name, ref.name, rv, ref.rv)
		}
		if items, err = countItems(ctx, ep, cmPath(listNS)+"?resourceVersion=0"); err != nil {
			return err
		}
		if items != want {
			return fmt.Errorf("%s lists %d ConfigMaps in %s, want %d", ep.name, items, listNS, want)
		}
		return nil
	})
	return ms(time.Since(t0)), items, err
}

// countItems GETs the list at path and counts its items while it
// streams, without decoding them (a list of 1,000,000 objects is 700 MB).
func countItems(ctx context.Context, ep *endpoint, path string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, ep.timeout)
	defer cancel()
	req, err := ep.newRequest(ctx, call{method: http.MethodGet, path: path})
	if err != nil {
		return 0, err
	}
	resp, err := ep.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s%s: %w", ep.name, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, &statusError{code: resp.StatusCode, msg: fmt.Sprintf("GET %s%s: %s: %s", ep.name, path, resp.Status, strings.TrimSpace(string(b)))}
	}
	var c itemCounter
	if _, err := io.CopyBuffer(&c, struct{ io.Reader }{resp.Body}, make([]byte, 64<<10)); err != nil {
		return 0, fmt.Errorf("GET %s%s: reading the body: %w", ep.name, path, err)
	}
	if err := c.done(); err != nil {
		return 0, fmt.Errorf("GET %s%s: %w", ep.name, path, err)
	}
	return c.items, nil
}

// itemCounter counts the objects of a List's items array as the JSON
// streams through it: the objects opened directly in an array of the
// top-level object (a List has no other array at that level).
type itemCounter struct {
	stack   []byte // open containers, '{' or '['
	inStr   bool
	escaped bool
	items   int
	closed  bool // the top-level object ended
}

func (c *itemCounter) Write(p []byte) (int, error) {
	for _, ch := range p {
		switch {
		case c.inStr:
			switch {
			case c.escaped:
				c.escaped = false
			case ch == '\\':
				c.escaped = true
			case ch == '"':
				c.inStr = false
			}
		case ch == '"':
			c.inStr = true
		case ch == '{' || ch == '[':
			if c.closed {
				return 0, errors.New("data after the list")
			}
			if ch == '{' && len(c.stack) == 2 && c.stack[1] == '[' {
				c.items++
			}
			c.stack = append(c.stack, ch)
		case ch == '}' || ch == ']':
			if len(c.stack) == 0 || (ch == '}') != (c.stack[len(c.stack)-1] == '{') {
				return 0, fmt.Errorf("unbalanced %q", ch)
			}
			c.stack = c.stack[:len(c.stack)-1]
			c.closed = len(c.stack) == 0
		}
	}
	return len(p), nil
}

// done checks that the list ended.
func (c *itemCounter) done() error {
	if !c.closed {
		return errors.New("the list ended early")
	}
	return nil
}
