package raftstore

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/internal/encryption"
	"github.com/litek8s/litek8s/internal/kv"
)

func transformerFor(t testing.TB, keys ...string) *encryption.Transformer {
	t.Helper()
	y := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n"
	for _, k := range keys {
		y += fmt.Sprintf("      - {name: %s, secret: %s}\n", k, base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%-32s", k))))
	}
	c, err := encryption.Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := encryption.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func secretKey(name string) kv.Key { return kv.Key{Resource: "secrets", Namespace: "ns", Name: name} }

const secretJSON = `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","namespace":"ns","uid":"u1","labels":{"a":"b"}},"data":{"v":"c2VjcmV0LXZhbHVl"}}`

// What is applied from an encrypted entry is the plaintext (labels and
// fields derived from it); a snapshot holds ciphertext; a restore with a
// rotated configuration reads it and marks it stale.
func TestTransformApplySnapshotRestore(t *testing.T) {
	old := transformerFor(t, "key1")
	h := newHarness(t, 100, 10)
	h.f.tr = old
	stored, err := old.ToStorage(secretKey("s"), []byte(secretJSON))
	if err != nil {
		t.Fatal(err)
	}
	obj := h.mustApply(kv.Write{Op: kv.OpCreate, Key: secretKey("s"), Object: stored})
	if !bytes.Contains(obj.Raw, []byte("c2VjcmV0LXZhbHVl")) || obj.Labels.Get("a") != "b" || obj.UID != "u1" || obj.Stale {
		t.Fatalf("applied %q labels %v uid %q stale %v", obj.Raw, obj.Labels, obj.UID, obj.Stale)
	}
	h.create("ns", "cm")
	snap := persist(t, h.f)
	if bytes.Contains(snap, []byte("c2VjcmV0LXZhbHVl")) || !bytes.Contains(snap, []byte("k8s:enc:aesgcm:v1:key1:")) {
		t.Fatalf("snapshot holds the plaintext or no ciphertext: %q", snap)
	}
	if !bytes.Contains(snap, []byte(`"name":"cm"`)) {
		t.Fatal("the ConfigMap is not plain in the snapshot")
	}

	rotated := newFSM(nil, 100, 10)
	rotated.tr = transformerFor(t, "key2", "key1")
	if err := rotated.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
		t.Fatal(err)
	}
	got, _ := rotated.get(secretKey("s"))
	if got == nil || !got.Stale || !bytes.Contains(got.Raw, []byte("c2VjcmV0LXZhbHVl")) {
		t.Fatalf("restored with key2 first: %+v", got)
	}
	if cm, _ := rotated.get(cmKey("ns", "cm")); cm == nil || cm.Stale {
		t.Fatalf("restored ConfigMap: %+v", cm)
	}

	without := newFSM(nil, 100, 10)
	err = without.Restore(io.NopCloser(bytes.NewReader(snap)))
	if err == nil || !strings.Contains(err.Error(), "no encryption configuration") {
		t.Fatalf("restore without the configuration: %v", err)
	}
	dropped := newFSM(nil, 100, 10)
	dropped.tr = transformerFor(t, "key2")
	if err := dropped.Restore(io.NopCloser(bytes.NewReader(snap))); err == nil || !strings.Contains(err.Error(), "k8s:enc:aesgcm:v1:key1:") {
		t.Fatalf("restore without the old key: %v", err)
	}
}

// A member that cannot decrypt a log entry stops with a panic that says
// why, rather than apply nothing or store ciphertext as an object.
func TestApplyEncryptedWithoutKeyPanics(t *testing.T) {
	stored, err := transformerFor(t, "key1").ToStorage(secretKey("s"), []byte(secretJSON))
	if err != nil {
		t.Fatal(err)
	}
	for name, tr := range map[string]Transformer{"no configuration": nil, "another key": transformerFor(t, "key2")} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, 100, 10)
			if tr != nil {
				h.f.tr = tr
			}
			defer func() {
				msg := fmt.Sprint(recover())
				if !strings.Contains(msg, "log entry 1") || !strings.Contains(msg, "--encryption-provider-config") {
					t.Fatalf("panic %q", msg)
				}
				if obj, _ := h.f.get(secretKey("s")); obj != nil {
					t.Fatalf("stored %q", obj.Raw)
				}
			}()
			h.apply(kv.Write{Op: kv.OpCreate, Key: secretKey("s"), Object: stored})
		})
	}
}

// BenchmarkApplySecret is one Secret's write on the leader's CPU: the
// encryption before Propose and the apply (decryption, derive), without
// and with an aesgcm configuration.
func BenchmarkApplySecret(b *testing.B) {
	for name, tr := range map[string]Transformer{"none": nil, "aesgcm": transformerFor(b, "key1")} {
		b.Run(name, func(b *testing.B) {
			h := newHarness(b, 10000, 100)
			if tr != nil {
				h.f.tr = tr
			}
			obj := []byte(secretJSON)
			b.SetBytes(int64(len(obj)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				k := kv.Key{Resource: "secrets", Namespace: "ns", Name: "s-" + fmt.Sprint(i)}
				stored, err := toStorage(tr, k, obj)
				if err != nil {
					b.Fatal(err)
				}
				h.mustApply(kv.Write{Op: kv.OpCreate, Key: k, Object: stored})
			}
		})
	}
}
