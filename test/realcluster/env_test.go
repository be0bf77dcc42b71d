package realcluster

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "env")
	// What up.sh writes: printf 'export %s=%q\n'.
	content := "export KUBECONFIG=/var/lib/litek8s-realcluster/kubeconfig\n" +
		"export NODE_NAME=litek8s-realnode\n" +
		"export ODD=a\\ b\n" +
		"export EMPTY=''\n\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env, err := parseEnv(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"KUBECONFIG": "/var/lib/litek8s-realcluster/kubeconfig",
		"NODE_NAME":  "litek8s-realnode",
		"ODD":        "a b",
		"EMPTY":      "",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if len(env) != len(want) {
		t.Errorf("got %d keys, want %d: %v", len(env), len(want), env)
	}
}
