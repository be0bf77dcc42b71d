package chart

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// hostMap is what Kubernetes gives a container that a local process must
// be given instead: the DNS names of Pods and Services mapped to loopback
// addresses, the Pod's own address (what a wildcard listener binds to in
// a Pod: each member has its own), ports chosen at run time when the
// rendered ones are taken, and the image's binaries.
type hostMap struct {
	names  map[string]string // DNS name → IP
	bindIP string            // replaces 0.0.0.0
	ports  map[string]string // rendered port → local port
	bins   map[string]string // command[0] in the image → local binary
}

// sub applies the map to one string of the container (an arg, an env
// value, a line of a mounted file), after the mount paths.
func (m hostMap) sub(s string) string {
	// Longest names first: no name is then replaced inside a longer one.
	names := make([]string, 0, len(m.names))
	for n := range m.names {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, n := range names {
		s = strings.ReplaceAll(s, n, m.names[n])
	}
	if m.bindIP != "" {
		s = strings.ReplaceAll(s, "0.0.0.0:", m.bindIP+":")
	}
	if len(m.ports) > 0 {
		var alts []string
		for p := range m.ports {
			alts = append(alts, regexp.QuoteMeta(p))
		}
		re := regexp.MustCompile(`:(` + strings.Join(alts, "|") + `)\b`)
		s = re.ReplaceAllStringFunc(s, func(match string) string { return ":" + m.ports[match[1:]] })
	}
	return s
}

// podProcess turns a rendered Pod spec's first container into a proc, as
// the kubelet would run it in Pod podName: env from values, the downward
// API, Secrets and ConfigMaps of ms; $(VAR) expanded in command and args;
// each volume a directory under root/podName (ConfigMap and Secret
// volumes filled with their keys, a PVC of claims or an emptyDir empty),
// and the mount paths replaced by those directories in args, env and
// mounted files. The process is not started.
func podProcess(t *testing.T, ms manifests, spec corev1.PodSpec, claims []string, podName, namespace string, m hostMap, root string) *proc {
	t.Helper()
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", podName, len(spec.Containers))
	}
	c := spec.Containers[0]
	dir := filepath.Join(root, podName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	// Volumes → directories.
	mounts := map[string]string{} // mountPath → local directory
	files := map[string]string{}  // local file → content, mapped after mounts are known
	for _, vm := range c.VolumeMounts {
		local := filepath.Join(dir, "volumes", vm.Name)
		if err := os.MkdirAll(local, 0o700); err != nil {
			t.Fatal(err)
		}
		mounts[vm.MountPath] = local
		var v *corev1.Volume
		for i := range spec.Volumes {
			if spec.Volumes[i].Name == vm.Name {
				v = &spec.Volumes[i]
			}
		}
		switch {
		case v == nil && slices.Contains(claims, vm.Name): // a PVC of the StatefulSet
		case v == nil:
			t.Fatalf("%s: mount %s has no volume", podName, vm.Name)
		case v.ConfigMap != nil:
			if len(v.ConfigMap.Items) > 0 {
				t.Fatalf("%s: volume %s: items are not supported here", podName, vm.Name)
			}
			for k, data := range ms.configMap(t, v.ConfigMap.Name).Data {
				files[filepath.Join(local, k)] = data
			}
		case v.Secret != nil:
			data := ms.secret(t, v.Secret.SecretName).Data
			if len(v.Secret.Items) == 0 {
				for k, b := range data {
					files[filepath.Join(local, k)] = string(b)
				}
			}
			for _, it := range v.Secret.Items {
				b, ok := data[it.Key]
				if !ok {
					t.Fatalf("%s: volume %s: Secret %s has no key %s", podName, vm.Name, v.Secret.SecretName, it.Key)
				}
				files[filepath.Join(local, it.Path)] = string(b)
			}
		case v.EmptyDir != nil:
		default:
			t.Fatalf("%s: volume %s of an unsupported type", podName, vm.Name)
		}
	}
	sub := func(s string) string { return m.sub(replacePaths(s, mounts)) }
	for f, data := range files {
		if err := os.WriteFile(f, []byte(sub(data)), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// Env, in order: each value may refer to the ones before it.
	raw := map[string]string{}
	var env []string
	for _, e := range c.Env {
		var val string
		switch {
		case e.ValueFrom == nil:
			val = expand(e.Value, raw)
		case e.ValueFrom.FieldRef != nil:
			switch e.ValueFrom.FieldRef.FieldPath {
			case "metadata.name":
				val = podName
			case "metadata.namespace":
				val = namespace
			default:
				t.Fatalf("%s: env %s: fieldRef %s not supported here", podName, e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			b, ok := ms.secret(t, ref.Name).Data[ref.Key]
			if !ok {
				t.Fatalf("%s: env %s: Secret %s has no key %s", podName, e.Name, ref.Name, ref.Key)
			}
			val = string(b)
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			d, ok := ms.configMap(t, ref.Name).Data[ref.Key]
			if !ok {
				t.Fatalf("%s: env %s: ConfigMap %s has no key %s", podName, e.Name, ref.Name, ref.Key)
			}
			val = d
		default:
			t.Fatalf("%s: env %s: source not supported here", podName, e.Name)
		}
		raw[e.Name] = val
		env = append(env, e.Name+"="+sub(val))
	}
	// What the image would have: the binaries on PATH, a HOME.
	env = append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+dir)

	if len(c.Command) == 0 {
		t.Fatalf("%s: no command (the image's entrypoint is not known here)", podName)
	}
	bin, ok := m.bins[c.Command[0]]
	if !ok {
		t.Fatalf("%s: command %q is not one of the image's binaries %v", podName, c.Command[0], m.bins)
	}
	var args []string
	for _, a := range append(slices.Clone(c.Command[1:]), c.Args...) {
		args = append(args, sub(expand(a, raw)))
	}
	return &proc{t: t, name: podName, dir: dir, path: bin, args: args, env: env}
}

// replacePaths replaces, in one pass, each path of mounts that stands
// alone in s (a whole path, or the start of one) with its directory.
func replacePaths(s string, mounts map[string]string) string {
	var alts []string
	for p := range mounts {
		alts = append(alts, regexp.QuoteMeta(p))
	}
	// Longest first: RE2 picks the first alternative that matches.
	sort.Slice(alts, func(i, j int) bool { return len(alts[i]) > len(alts[j]) })
	re := regexp.MustCompile(`(?:^|[\s"'=,:])(` + strings.Join(alts, "|") + `)`)
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
		start, end := m[2], m[3]
		if end < len(s) && !strings.ContainsRune("/\"' \t\n,=", rune(s[end])) {
			continue // a longer path that only starts the same
		}
		b.WriteString(s[last:start])
		b.WriteString(mounts[s[start:end]])
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// expand replaces $(VAR) with the value of VAR in env, as the kubelet
// does in a container's command, args and env: a reference to an
// undefined variable stays as it is, and $$ is a literal $.
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// loopbackIPs returns n addresses 127.R.S.2 ... 127.R.S.(n+1) of a random
// /24 of the loopback net (others' tests use 127.0.0.1), after checking
// that a listener binds to each: Linux routes all of 127.0.0.0/8 to lo;
// other systems may not, and the test skips there.
func loopbackIPs(t *testing.T, n int) []string {
	t.Helper()
	r, s := 100+rand.IntN(150), 1+rand.IntN(254)
	var ips []string
	for i := range n {
		ip := fmt.Sprintf("127.%d.%d.%d", r, s, i+2)
		ln, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Skipf("cannot listen on %s (loopback addresses other than 127.0.0.1 need Linux): %v", ip, err)
		}
		ln.Close()
		ips = append(ips, ip)
	}
	return ips
}

// localPorts maps each rendered port to itself when it is free on every
// ip, else to a random free high port: fixed ports on a random /24 rarely
// collide, but another process may listen on 0.0.0.0:port.
func localPorts(t *testing.T, ips []string, rendered []int32) map[string]string {
	t.Helper()
	freeOnAll := func(port int) bool {
		var lns []net.Listener
		defer func() {
			for _, ln := range lns {
				ln.Close()
			}
		}()
		for _, ip := range ips {
			ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
			if err != nil {
				return false
			}
			lns = append(lns, ln)
		}
		return true
	}
	out := map[string]string{}
	taken := map[int]bool{}
	for _, p := range rendered {
		taken[int(p)] = true
	}
	for _, p := range rendered {
		port := int(p)
		for tries := 0; !freeOnAll(port); tries++ {
			if tries == 100 {
				t.Fatalf("no free port on %v for %d", ips, p)
			}
			for port = 20000 + rand.IntN(30000); taken[port]; port = 20000 + rand.IntN(30000) {
			}
		}
		taken[port] = true
		if port != int(p) {
			t.Logf("port %d is taken: the processes use %d", p, port)
		}
		out[strconv.Itoa(int(p))] = strconv.Itoa(port)
	}
	return out
}
