package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runAsNode makes the test binary run main with the arguments a test gives
// it: the tests start real `node` processes without building one.
const runAsNode = "NODE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsNode) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// nodeCmd is a `node` process with args, stdout and stderr in buffers.
func nodeCmd(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsNode+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, &stderr
}

// A misspelt key in the config file is refused with the key and the flag
// it most likely meant, before anything is created; several are all named.
func TestConfigFileUnknownKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "node.yaml")
	data := filepath.Join(dir, "data")
	if err := os.WriteFile(file, []byte("data-dir: "+data+"\napi-adress: 127.0.0.1:1\nlog-levle: debug\nzzzzzz: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadConfig([]string{"--config", file})
	if err == nil {
		t.Fatal("a config file with unknown keys was accepted")
	}
	for _, want := range []string{
		`config file ` + file + `: unknown key "api-adress" (did you mean "api-addr"?)`,
		`unknown key "log-levle" (did you mean "log-level"?)`,
		`unknown key "zzzzzz"; keys are the flag names`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), `"zzzzzz" (did you mean`) {
		t.Errorf("a key like no flag got a suggestion: %v", err)
	}
	// The same file through a real process: exit 1, no data dir.
	cmd, stderr := nodeCmd(t, "--config", file)
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("node with a misspelt config key: %v, want exit status 1; stderr: %s", err, stderr)
	}
	if !strings.Contains(stderr.String(), `unknown key "api-adress" (did you mean "api-addr"?)`) {
		t.Errorf("stderr does not name the key: %s", stderr)
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data dir was created (%v)", err)
	}
	// Only the command line sets --config and --version.
	if err := os.WriteFile(file, []byte("config: other.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig([]string{"--config", file}); err == nil || !strings.Contains(err.Error(), `"config" can only be given on the command line`) {
		t.Errorf("config key in a config file: %v", err)
	}
	// A nested key is named in full.
	if err := os.WriteFile(file, []byte("audit:\n  log-path: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig([]string{"--config", file}); err == nil || !strings.Contains(err.Error(), `unknown key "audit.log-path"`) {
		t.Errorf("nested key: %v", err)
	}
}

func TestEditDistanceAndClosest(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3}, {"api-adress", "api-addr", 4}, {"same", "same", 0}} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	flags := []string{"data-dir", "log-level", "log-format", "join"}
	for key, want := range map[string]string{"data_dir": "data-dir", "log-formt": "log-format", "jion": "join", "unrelated-thing": ""} {
		if got := closest(key, flags); got != want {
			t.Errorf("closest(%q) = %q, want %q", key, got, want)
		}
	}
}

// Positional arguments and unknown flags are usage errors: exit status 2.
func TestPositionalArgumentsRefused(t *testing.T) {
	_, err := loadConfig([]string{"--id", "m1", "foo"})
	if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), `unexpected argument "foo"`) {
		t.Fatalf("node foo: %v, want a usage error naming foo", err)
	}
	for _, args := range [][]string{{"foo"}, {"--no-such-flag"}} {
		cmd, stderr := nodeCmd(t, append(args, "--data-dir", filepath.Join(t.TempDir(), "d"))...)
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("node %v: %v, want exit status 2; stderr: %s", args, err, stderr)
		}
	}
}

// --log-format picks slog's text or JSON handler; anything else is refused
// naming the flag, as is a bad --log-level.
func TestLogFormat(t *testing.T) {
	for format, want := range map[string]string{"text": "level=INFO msg=hello", "json": `"level":"INFO","msg":"hello"`} {
		v, err := loadConfig([]string{"--log-format", format})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := memberConfig(v); err != nil {
			t.Fatalf("--log-format %s: %v", format, err)
		}
		var buf bytes.Buffer
		log, err := newLogger(&buf, format, "info")
		if err != nil {
			t.Fatal(err)
		}
		log.Info("hello")
		log.Debug("hidden")
		if !strings.Contains(buf.String(), want) || strings.Contains(buf.String(), "hidden") {
			t.Errorf("--log-format %s wrote %q, want %q and no debug line", format, buf.String(), want)
		}
	}
	for _, args := range [][]string{{"--log-format", "xml"}, {"--log-level", "loud"}} {
		v, err := loadConfig(args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := memberConfig(v); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: %v, want an error naming the flag", args, err)
		}
	}
}

// A member ID must be a DNS-1123 label, like the Pod names the chart uses.
func TestInvalidMemberID(t *testing.T) {
	for _, id := range []string{"Node_1", "-a", "a.b", strings.Repeat("a", 64)} {
		v, err := loadConfig([]string{"--id", id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := memberConfig(v); err == nil || !strings.Contains(err.Error(), "invalid member ID") {
			t.Errorf("--id %q: %v, want it refused", id, err)
		}
	}
	v, err := loadConfig([]string{"--id", "litek8s-0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := memberConfig(v); err != nil {
		t.Errorf("--id litek8s-0: %v", err)
	}
}

// A second node on a running member's data dir fails at once, saying the
// dir is in use and by which pid, and changes nothing in it; the first
// member's clean shutdown (SIGTERM) then logs no ERROR.
func TestDataDirInUse(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	common := []string{"--data-dir", data, "--api-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0",
		"--release-startup-memory", "0"}
	first, firstErr := nodeCmd(t, append([]string{"--id", "first"}, common...)...)
	out, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	serving := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() { // "litek8s member first serving ...": Start returned
			if strings.HasPrefix(sc.Text(), "litek8s member first serving") {
				close(serving)
			}
		}
		exited <- first.Wait()
	}()
	defer func() {
		first.Process.Kill()
		<-exited
	}()
	select {
	case <-serving:
	case err := <-exited:
		exited <- err
		t.Fatalf("first member exited: %v; stderr: %s", err, firstErr)
	case <-time.After(70 * time.Second):
		t.Fatalf("first member did not start; stderr: %s", firstErr)
	}
	before := tlsFiles(t, data)

	second, secondErr := nodeCmd(t, append([]string{"--id", "second"}, common...)...)
	start := time.Now()
	err = second.Run()
	took := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("second node on the same data dir: %v, want exit status 1; stderr: %s", err, secondErr)
	}
	want := "data dir " + data + " is in use by another process (pid " + strconv.Itoa(first.Process.Pid) + ")"
	if !strings.Contains(secondErr.String(), want) {
		t.Errorf("second node's stderr %q does not say %q", secondErr, want)
	}
	if took > 3*time.Second {
		t.Errorf("second node took %s to fail, want at once", took)
	}
	if after := tlsFiles(t, data); after != before {
		t.Errorf("the second node changed the data dir:\nbefore %s\nafter  %s", before, after)
	}

	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("first member after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("first member did not stop within 30s of SIGTERM")
	}
	if strings.Contains(firstErr.String(), "level=ERROR") {
		t.Errorf("a clean shutdown logged errors:\n%s", grepLines(firstErr.String(), "level=ERROR"))
	}
	if !strings.Contains(firstErr.String(), "shutting down") {
		t.Errorf("the first member's log has no shutdown line: the check above saw nothing:\n%s", firstErr)
	}
}

// tlsFiles describes what a second member could have written: the lock
// file's content and every file under tls/ with its size and modification
// time (wal/ and snapshots/ are the running member's to change).
func tlsFiles(t *testing.T, data string) string {
	t.Helper()
	var b strings.Builder
	lock, err := os.ReadFile(filepath.Join(data, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("lock=" + strings.TrimSpace(string(lock)))
	err = filepath.Walk(filepath.Join(data, "tls"), func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(" " + path + ":" + strconv.FormatInt(fi.Size(), 10) + ":" + fi.ModTime().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A --join or --peers that is no member's API URL is refused at start
// instead of being retried for a minute.
func TestMemberURLsChecked(t *testing.T) {
	for _, args := range [][]string{
		{"--join", "https://127.0.0.1:", "--join-token", "t"},
		{"--join", "127.0.0.1:6443", "--join-token", "t"},
		{"--join", "http://127.0.0.1:6443", "--join-token", "t"},
		{"--bootstrap-expect", "3", "--join-token", "t", "--peers", "https://m0:6443,https://m1:6443/x,https://m2:6443"},
	} {
		v, err := loadConfig(args)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := memberConfig(v); err == nil || !strings.Contains(err.Error(), "want https://host:port") {
			t.Errorf("%v: %v, want it refused", args, err)
		}
	}
	v, err := loadConfig([]string{"--bootstrap-expect", "3", "--join-token", "t", "--peers", "https://m0.x.svc:6443,https://m1:6443,https://10.0.0.3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := memberConfig(v); err != nil {
		t.Errorf("valid peers: %v", err)
	}
}
