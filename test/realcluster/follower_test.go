package realcluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const followerNS = "follower-test"

// TestKubectlThroughFollower runs what a user runs against running pods
// with kubectl pointed at a litek8s member that `ctl status` reports as a
// follower (checked before and after), on the real node of UpLitek8s:
// run, logs -f, exec -it (in a pty), attach -i, port-forward, cp both
// ways, debug (an ephemeral container), get --raw of the node's kubelet
// healthz through nodes/proxy, and a drain of the real node that respects
// a PodDisruptionBudget (a 2-replica Deployment, minAvailable 1: never
// fewer than one of its pods Ready while its pods move to the simulated
// node), then uncordon. Every command and its output is logged.
func TestKubectlThroughFollower(t *testing.T) {
	c := UpLitek8s(t, SimulatedNodes(1))
	cs := clientset(t, c.Kubeconfig)
	waitNodes(t, c, cs)
	ms := newMembers(t, c)
	f := ms.follower(t)
	k := kubectl{t: t, c: c, kubeconfig: c.MemberKubeconfigs[f], verbose: true}
	node, bb := c.Env["NODE_NAME"], c.Env["BUSYBOX_IMAGE"]
	ns := []string{"-n", followerNS}
	nsArgs := func(args ...string) []string { return append(ns, args...) }
	k.run("create", "namespace", followerNS)
	fast := `--overrides={"spec":{"terminationGracePeriodSeconds":1}}`

	// kubectl run, on the real node (the simulated one is tainted).
	k.run(nsArgs("run", "shell", "--image", bb, "--image-pull-policy=Never", "--restart=Never", fast,
		"--command", "--", "sleep", "3600")...)
	k.run(nsArgs("wait", "--for=condition=Ready", "pod/shell", "--timeout=120s")...)
	if on := k.run(nsArgs("get", "pod", "shell", "-o", "jsonpath={.spec.nodeName}")...); on != node {
		t.Fatalf("pod shell runs on %q, want the real node %s", on, node)
	}

	t.Run("logs -f", func(t *testing.T) { logsFollow(t, k, bb) })
	t.Run("exec -it", func(t *testing.T) { execTTY(t, k) })
	t.Run("attach -i", func(t *testing.T) { attachStdin(t, k, bb) })
	t.Run("port-forward", func(t *testing.T) { portForward(t, k, bb) })
	t.Run("cp", func(t *testing.T) { copyBothWays(t, k) })
	t.Run("debug", func(t *testing.T) {
		k := k
		k.t = t
		k.run(nsArgs("debug", "shell", "--image", bb, "--image-pull-policy=Never", "-c", "debugger",
			"--", "sh", "-c", `echo "debug-ok $(hostname)"`)...)
		eventually(t, time.Minute, func() error {
			st, _ := k.try(nsArgs("get", "pod", "shell", "-o", "jsonpath={.status.ephemeralContainerStatuses[0].state.terminated.reason}")...)
			if strings.TrimSpace(st) != "Completed" {
				return fmt.Errorf("ephemeral container debugger: terminated reason %q", st)
			}
			return nil
		})
		if out := k.run(nsArgs("logs", "shell", "-c", "debugger")...); out != "debug-ok shell" {
			t.Errorf("debugger printed %q, want %q (its hostname is the pod's)", out, "debug-ok shell")
		}
	})
	t.Run("nodes/proxy healthz", func(t *testing.T) {
		k := k
		k.t = t
		if out := k.run("get", "--raw", "/api/v1/nodes/"+node+"/proxy/healthz"); out != "ok" {
			t.Errorf("the kubelet's healthz through nodes/proxy: %q, want ok", out)
		}
	})
	t.Run("drain with a PodDisruptionBudget", func(t *testing.T) { drainWithPDB(t, c, k, bb) })

	ms.assertFollower(t, f, "after the kubectl commands")
}

// logsFollow: `kubectl logs -f` of a pod that prints a line a second
// streams the lines as they come and returns when the container exits.
func logsFollow(t *testing.T, k kubectl, image string) {
	k.t = t
	k.run("-n", followerNS, "run", "ticker", "--image", image, "--image-pull-policy=Never", "--restart=Never",
		"--command", "--", "sh", "-c", `for i in 1 2 3 4 5 6; do echo "tick-$i"; sleep 1; done`)
	k.run("-n", followerNS, "wait", "--for=jsonpath={.status.phase}=Running", "pod/ticker", "--timeout=120s")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := k.command(ctx, "-n", followerNS, "logs", "-f", "ticker")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	var at []time.Duration
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		at = append(at, time.Since(start))
	}
	err = cmd.Wait()
	t.Logf("$ kubectl logs -f ticker (%v after %s)\n%s\narrived at %v", err, time.Since(start).Round(time.Millisecond),
		strings.Join(lines, "\n"), at)
	if err != nil {
		t.Fatalf("kubectl logs -f: %v", err)
	}
	if want := "tick-1 tick-2 tick-3 tick-4 tick-5 tick-6"; strings.Join(lines, " ") != want {
		t.Errorf("kubectl logs -f printed %q, want %q", lines, want)
	}
	if len(at) > 1 && at[len(at)-1]-at[0] < 2*time.Second {
		t.Errorf("all lines arrived within %v: not followed as they were written", at[len(at)-1]-at[0])
	}
	// The container exited (the kubelet reports it a moment later).
	eventually(t, 30*time.Second, func() error {
		if phase := k.run("-n", followerNS, "get", "pod", "ticker", "-o", "jsonpath={.status.phase}"); phase != "Succeeded" {
			return fmt.Errorf("pod ticker is %s after logs -f returned, want Succeeded", phase)
		}
		return nil
	})
}

// execTTY: `kubectl exec -it` under script(1), which gives it a real
// terminal: the command sees a pty, its output comes back and its exit
// code is kubectl's.
func execTTY(t *testing.T, k kubectl) {
	k.t = t
	cmdline := fmt.Sprintf("%s --kubeconfig %s -n %s exec -it shell -- sh -c %s", k.c.Kubectl(), k.kubeconfig,
		followerNS, shellQuote(`tty; echo "exec-ok $((6*7))"; exit 3`))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	// script's stdin: a pipe that stays open (and silent) until the end.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd := exec.CommandContext(ctx, "script", "-qec", cmdline, "/dev/null")
	cmd.Stdin = r
	out, err := cmd.CombinedOutput()
	t.Logf("$ script -qec %q /dev/null (%v)\n%s", cmdline, err, out)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("kubectl exec -it: %v, want exit code 3 (the command's)", err)
	}
	for _, want := range []string{"/dev/pts/", "exec-ok 42"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("kubectl exec -it output lacks %q", want)
		}
	}
}

// attachStdin: `kubectl attach -i` feeds its stdin to a pod that reads
// it (stdinOnce: the container sees EOF when kubectl's stdin ends) and
// prints what the pod answers.
func attachStdin(t *testing.T, k kubectl, image string) {
	k.t = t
	k.apply(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: reader, namespace: %s}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
  - name: reader
    image: %s
    imagePullPolicy: Never
    stdin: true
    stdinOnce: true
    command: [sh, -c, 'while read l; do echo "got:$l"; done; echo reader-eof']
`, followerNS, image))
	k.run("-n", followerNS, "wait", "--for=condition=Ready", "pod/reader", "--timeout=120s")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := k.command(ctx, "-n", followerNS, "attach", "-i", "reader", "-c", "reader")
	cmd.Stdin = strings.NewReader("hello\nworld\n")
	out, err := cmd.CombinedOutput()
	t.Logf("$ printf 'hello\\nworld\\n' | kubectl attach -i reader (%v)\n%s", err, out)
	if err != nil {
		t.Fatalf("kubectl attach -i: %v", err)
	}
	for _, want := range []string{"got:hello", "got:world", "reader-eof"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("kubectl attach -i output lacks %q", want)
		}
	}
}

// forwarding is kubectl port-forward's line naming the local port.
var forwarding = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 8080`)

// portForward: `kubectl port-forward pod/web :8080` to a busybox httpd;
// an HTTP GET through the local port returns the file it serves.
func portForward(t *testing.T, k kubectl, image string) {
	k.t = t
	content := "served-" + randomHex(t)
	k.apply(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: web, namespace: %s}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, 'mkdir -p /www && echo %s > /www/file.txt && exec httpd -f -p 8080 -h /www']
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
`, followerNS, image, content))
	k.run("-n", followerNS, "wait", "--for=condition=Ready", "pod/web", "--timeout=120s")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := k.command(ctx, "-n", followerNS, "port-forward", "pod/web", ":8080")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		err := cmd.Wait()
		t.Logf("kubectl port-forward ended (%v); stderr:\n%s", err, stderr.String())
	}()
	sc := bufio.NewScanner(stdout)
	port := ""
	for port == "" && sc.Scan() {
		t.Logf("kubectl port-forward: %s", sc.Text())
		if m := forwarding.FindStringSubmatch(sc.Text()); m != nil {
			port = m[1]
		}
	}
	if port == "" {
		t.Fatalf("kubectl port-forward named no local port (%v)", sc.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	resp, err := http.Get("http://127.0.0.1:" + port + "/file.txt")
	if err != nil {
		t.Fatalf("GET through the forwarded port: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("GET http://127.0.0.1:%s/file.txt: %s %q (%v)", port, resp.Status, body, err)
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != content {
		t.Errorf("GET through the forwarded port: %s %q, want 200 %q", resp.Status, body, content)
	}
}

// copyBothWays: `kubectl cp` of a local file into pod shell (read back
// with exec) and of a file the pod wrote out of it.
func copyBothWays(t *testing.T, k kubectl) {
	k.t = t
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	content := "copied-in-" + randomHex(t) + "\n"
	if err := os.WriteFile(in, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	k.run("-n", followerNS, "exec", "shell", "--", "mkdir", "-p", "/tmp") // the image has only /bin
	k.run("cp", in, followerNS+"/shell:/tmp/in.txt")
	if got := k.run("-n", followerNS, "exec", "shell", "--", "cat", "/tmp/in.txt"); got+"\n" != content {
		t.Errorf("the pod's copy holds %q, want %q", got, content)
	}
	k.run("-n", followerNS, "exec", "shell", "--", "sh", "-c", "seq 1 2000 > /tmp/out.txt")
	out := filepath.Join(dir, "out.txt")
	k.run("cp", followerNS+"/shell:/tmp/out.txt", out)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if string(got) != want.String() {
		t.Errorf("copied out %d bytes, want the pod's %d (seq 1 2000)", len(got), want.Len())
	} else {
		t.Logf("copied out %d bytes, the same as the pod wrote", len(got))
	}
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// shellQuote quotes s for sh (script -c runs its command through the
// shell).
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
