package readme

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// block is one fenced ```sh block of README.md and its marker.
type block struct {
	line    int    // README line of the opening fence
	text    string // the commands
	marker  string // the marker's text after "test:", "" when there is none
	run     bool
	session string // "" for a shell of its own
	timeout time.Duration
	covered []string // covered-by: PATH, then test names
}

var markerRe = regexp.MustCompile(`^<!--\s*test:\s*(.*?)\s*-->$`)

// parse returns README's sh blocks, with their markers decoded, and the
// errors of its markers (an unmarked block, a stray or malformed marker).
func parse(readme string) ([]block, []error) {
	var (
		blocks []block
		errs   []error
	)
	lines := strings.Split(readme, "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if m := markerRe.FindStringSubmatch(l); m != nil {
			if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```sh" {
				errs = append(errs, fmt.Errorf("README.md:%d: marker %q is not right before a ```sh fence", i+1, l))
			}
			continue
		}
		if !strings.HasPrefix(l, "```") {
			continue
		}
		lang := strings.TrimPrefix(l, "```")
		start := i
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		if lang != "sh" {
			continue
		}
		b := block{line: start + 1, text: strings.Join(body, "\n") + "\n", timeout: 6 * time.Minute}
		if start > 0 {
			if m := markerRe.FindStringSubmatch(strings.TrimSpace(lines[start-1])); m != nil {
				b.marker = m[1]
			}
		}
		if err := b.decode(); err != nil {
			errs = append(errs, fmt.Errorf("README.md:%d: %w", b.line, err))
			continue
		}
		blocks = append(blocks, b)
	}
	return blocks, errs
}

// decode reads b.marker into b's fields.
func (b *block) decode() error {
	f := strings.Fields(b.marker)
	switch {
	case len(f) == 0:
		return errors.New("```sh block without a marker (<!-- test: run -->, <!-- test: run session=NAME --> or <!-- test: covered-by=PATH TestX -->) on the line before it")
	case f[0] == "run":
		b.run = true
		for _, opt := range f[1:] {
			k, v, _ := strings.Cut(opt, "=")
			switch k {
			case "session":
				if v == "" {
					return errors.New("session= needs a name")
				}
				b.session = v
			case "timeout":
				d, err := time.ParseDuration(v)
				if err != nil {
					return fmt.Errorf("timeout: %w", err)
				}
				b.timeout = d
			default:
				return fmt.Errorf("unknown run option %q", opt)
			}
		}
	case strings.HasPrefix(f[0], "covered-by="):
		path := strings.TrimPrefix(f[0], "covered-by=")
		if path == "" {
			return errors.New("covered-by= needs a path")
		}
		b.covered = append([]string{path}, f[1:]...)
	default:
		return fmt.Errorf("unknown marker %q", b.marker)
	}
	return nil
}

// checkCovered returns an error unless root/PATH exists and defines each
// named test (func TestX( in one of its _test.go files).
func checkCovered(root string, covered []string) error {
	dir := filepath.Join(root, covered[0])
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("covered-by: %w", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	var src []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		src = append(src, b...)
	}
	for _, name := range covered[1:] {
		if !bytes.Contains(src, []byte("func "+name+"(")) {
			return fmt.Errorf("covered-by: %s has no test %s", covered[0], name)
		}
	}
	return nil
}

// TestREADMEMarkers checks that every sh block of README.md carries a
// valid marker and that each covered-by names an existing test; it runs
// nothing and is quick.
func TestREADMEMarkers(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, errs := parse(string(readme))
	for _, err := range errs {
		t.Error(err)
	}
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```sh block")
	}
	runs := 0
	for _, b := range blocks {
		if b.covered != nil {
			if err := checkCovered(root, b.covered); err != nil {
				t.Errorf("README.md:%d: %v", b.line, err)
			}
		} else {
			runs++
		}
	}
	if runs == 0 {
		t.Error("no README block is marked run")
	}
}

// The parser itself: a block without a marker, a stray marker and an
// unknown option are errors; sessions and timeouts are read.
func TestParse(t *testing.T) {
	src := "x\n<!-- test: run session=a timeout=1m -->\n```sh\necho 1\n```\n" +
		"```sh\necho unmarked\n```\n" +
		"<!-- test: run -->\ntext\n" +
		"<!-- test: covered-by=test/realcluster TestRealNode -->\n```sh\nup.sh\n```\n" +
		"<!-- test: run color=blue -->\n```sh\necho 2\n```\n" +
		"```yaml\na: b\n```\n"
	blocks, errs := parse(src)
	if len(blocks) != 2 {
		t.Fatalf("blocks: got %d, want 2: %+v", len(blocks), blocks)
	}
	if b := blocks[0]; !b.run || b.session != "a" || b.timeout != time.Minute || b.text != "echo 1\n" || b.line != 3 {
		t.Errorf("first block: %+v", b)
	}
	if b := blocks[1]; b.run || len(b.covered) != 2 || b.covered[1] != "TestRealNode" {
		t.Errorf("covered block: %+v", b)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"README.md:6: ```sh block without a marker", "README.md:9: marker", `unknown run option "color=blue"`} {
		if !strings.Contains(all, want) {
			t.Errorf("errors lack %q:\n%s", want, all)
		}
	}
}

// TestREADMEBlocks runs every block marked run, session by session, and
// fails on the first block of a session that fails or outlives its
// timeout, printing the block and what it printed.
func TestREADMEBlocks(t *testing.T) {
	root := repoRoot(t)
	for _, tool := range []string{"bash", "go", "git", "kubectl", "jq", "openssl", "strings"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not on PATH (CI=true: the README test must run)", tool)
			}
			t.Skipf("%s is not on PATH", tool)
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, errs := parse(string(readme))
	if len(errs) > 0 {
		t.Fatalf("README markers: %v (see TestREADMEMarkers)", errors.Join(errs...))
	}
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	copyTracked(t, root, repo)

	ports := allocPorts(t, blocks)
	env := blockEnv(t, tmp, ports)
	// One build in the copy first: `go run` and `go build` in the blocks
	// then find every package in the build cache.
	build := exec.Command("go", "build", "./cmd/node", "./cmd/ctl")
	build.Dir, build.Env = repo, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in the copy: %v\n%s", err, out)
	}

	// Sessions in the order of their first block; a block of its own is a
	// session of one.
	var order []string
	sessions := map[string][]block{}
	for _, b := range blocks {
		if !b.run {
			continue
		}
		name := b.session
		if name == "" {
			name = fmt.Sprintf("line-%d", b.line)
		}
		if _, ok := sessions[name]; !ok {
			order = append(order, name)
		}
		sessions[name] = append(sessions[name], b)
	}
	for _, name := range order {
		t.Run(name, func(t *testing.T) {
			runSession(t, tmp, repo, name, sessions[name], ports, env)
		})
	}
}

// runSession runs blocks in one bash -e reading `source FILE` lines from
// its stdin; after each, the shell writes a line to fd 3, which the test
// waits for (or for the shell's exit, or the block's timeout).
func runSession(t *testing.T, tmp, repo, name string, blocks []block, ports map[string]string, env []string) {
	dir := filepath.Join(tmp, "blocks", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "output.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	doneR, doneW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("bash", "--noprofile", "--norc", "-e")
	sh.Dir, sh.Env = repo, env
	sh.Stdout, sh.Stderr = logf, logf
	sh.ExtraFiles = []*os.File{doneW} // fd 3
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	doneW.Close()
	pgid := sh.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- sh.Wait() }()
	done := make(chan struct{}, len(blocks))
	readerDone := make(chan struct{})
	go func() { // ends when every holder of fd 3 has exited or doneR is closed
		defer close(readerDone)
		sc := bufio.NewScanner(doneR)
		for sc.Scan() {
			done <- struct{}{}
		}
	}()
	defer func() {
		stdin.Close()
		stopGroup(t, pgid)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("session %s: bash did not exit", name)
		}
		doneR.Close()
		<-readerDone
	}()

	for i, b := range blocks {
		file := filepath.Join(dir, fmt.Sprintf("%02d-line-%d.sh", i, b.line))
		text := substitute(b.text, ports, filepath.Join(tmp, "tmp"))
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		start, _ := logf.Seek(0, io.SeekCurrent)
		began := time.Now()
		if _, err := fmt.Fprintf(stdin, "source %s </dev/null\necho done >&3\n", file); err != nil {
			t.Fatalf("README.md:%d: writing to the shell: %v", b.line, err)
		}
		timeout := b.timeout
		if d, ok := t.Deadline(); ok && time.Until(d)-time.Minute < timeout {
			// Fail while there is time to stop the group: a test binary
			// killed by -timeout leaves the blocks' members running.
			timeout = max(time.Until(d)-time.Minute, time.Second)
		}
		var failure string
		select {
		case <-done:
		case err := <-exited:
			exited <- err // for the deferred wait
			failure = fmt.Sprintf("failed (shell exited: %v)", err)
		case <-time.After(timeout):
			failure = fmt.Sprintf("did not finish within %v", timeout)
		}
		if failure != "" {
			out, _ := os.ReadFile(logPath)
			if int64(len(out)) >= start {
				out = out[start:]
			}
			t.Fatalf("README.md:%d (session %s) %s after %v.\nblock as run:\n%s\noutput:\n%s",
				b.line, name, failure, time.Since(began).Round(time.Millisecond), text, out)
		}
		t.Logf("README.md:%d ran in %v", b.line, time.Since(began).Round(time.Millisecond))
	}
}

// stopGroup sends SIGTERM to the process group, then SIGKILL to what is
// left of it after 15 s.
func stopGroup(t *testing.T, pgid int) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(15 * time.Second)
	for groupAlive(pgid) {
		if time.Now().After(deadline) {
			t.Logf("process group %d: SIGKILL after SIGTERM", pgid)
			syscall.Kill(-pgid, syscall.SIGKILL)
			deadline = time.Now().Add(time.Hour)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// groupAlive reports whether a process of group pgid runs (zombies, which
// their new parent reaps, do not count).
func groupAlive(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

var portRe = regexp.MustCompile(`\b(127\.0\.0\.1|localhost):(\d{4,5})\b`)

// allocPorts maps every port of 1024 and up that the run blocks name on
// 127.0.0.1 or localhost, and the defaults 6443 and 7000, to free ports.
func allocPorts(t *testing.T, blocks []block) map[string]string {
	want := map[string]bool{"6443": true, "7000": true}
	for _, b := range blocks {
		if !b.run {
			continue
		}
		for _, m := range portRe.FindAllStringSubmatch(b.text, -1) {
			if p, _ := strconv.Atoi(m[2]); p >= 1024 {
				want[m[2]] = true
			}
		}
	}
	ports := map[string]string{}
	var held []net.Listener // held until all are chosen, so none repeats
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	keys := make([]string, 0, len(want))
	for p := range want {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
		ports[p] = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	}
	t.Logf("ports: %v", ports)
	return ports
}

// substitute replaces the README's ports by the chosen ones and /tmp/ by
// tmpDir.
func substitute(text string, ports map[string]string, tmpDir string) string {
	text = portRe.ReplaceAllStringFunc(text, func(s string) string {
		host, port, _ := strings.Cut(s, ":")
		if p, ok := ports[port]; ok {
			return host + ":" + p
		}
		return s
	})
	return strings.ReplaceAll(text, "/tmp/", tmpDir+"/")
}

// blockEnv is the blocks' environment: the test's, with HOME, KUBECONFIG
// and TMPDIR in tmp, Go's caches where they are (so the module cache is
// not downloaded again), -trimpath, and the default node addresses on free
// ports.
func blockEnv(t *testing.T, tmp string, ports map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "KUBECONFIG", k == "TMPDIR", strings.HasPrefix(k, "LITEK8S_"):
			continue
		}
		env = append(env, kv)
	}
	for _, k := range []string{"GOPATH", "GOMODCACHE", "GOCACHE", "GOFLAGS", "GOTOOLCHAIN"} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		v := strings.TrimSpace(string(out))
		if k == "GOFLAGS" {
			// Without -trimpath the build cache keys every package of the
			// copy by its directory, a new one each run: every run would
			// compile the module again.
			v = strings.TrimSpace(v + " -trimpath")
		}
		env = append(env, k+"="+v)
	}
	home := filepath.Join(tmp, "home")
	for _, d := range []string{home, filepath.Join(tmp, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return append(env, "HOME="+home, "KUBECONFIG="+filepath.Join(home, ".kube", "config"),
		"TMPDIR="+filepath.Join(tmp, "tmp"),
		"LITEK8S_API_ADDR=127.0.0.1:"+ports["6443"], "LITEK8S_RAFT_ADDR=127.0.0.1:"+ports["7000"])
}

// copyTracked copies the repository's tracked files (as they are in the
// working tree) from root to dst.
func copyTracked(t *testing.T, root, dst string) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a symlink/submodule
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// repoRoot is the module root, two directories above this package (go
// test runs in the package's directory).
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}
