package encryption

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/litek8s/litek8s/internal/kv"
)

var (
	key32 = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	key16 = base64.StdEncoding.EncodeToString([]byte("fedcba9876543210"))
	other = base64.StdEncoding.EncodeToString([]byte("ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"))
)

func mustParse(t *testing.T, y string) *Transformer {
	t.Helper()
	c, err := Parse([]byte(y))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	tr, err := New(c)
	if err != nil {
		t.Fatalf("new: %v", err)
	}
	return tr
}

func config(provider string) string {
	return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
` + provider
}

// Each provider round-trips, writes kube's prefix and no plaintext.
func TestProvidersRoundTrip(t *testing.T) {
	plain := []byte(`{"kind":"Secret","apiVersion":"v1","data":{"v":"dG9wLXNlY3JldA=="}}`)
	k := kv.Key{Resource: "secrets", Namespace: "default", Name: "s"}
	for _, tc := range []struct{ name, provider, prefix string }{
		{"aesgcm", "  - aesgcm: {keys: [{name: key1, secret: " + key32 + "}]}\n", "k8s:enc:aesgcm:v1:key1:"},
		{"aesgcm16", "  - aesgcm: {keys: [{name: k16, secret: " + key16 + "}]}\n", "k8s:enc:aesgcm:v1:k16:"},
		{"aescbc", "  - aescbc: {keys: [{name: key1, secret: " + key32 + "}]}\n", "k8s:enc:aescbc:v1:key1:"},
		{"secretbox", "  - secretbox: {keys: [{name: key1, secret: " + key32 + "}]}\n", "k8s:enc:secretbox:v1:key1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustParse(t, config(tc.provider))
			out, err := tr.ToStorage(k, plain)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(out, []byte(tc.prefix)) || bytes.Contains(out, []byte("dG9wLXNlY3JldA")) {
				t.Fatalf("stored %q", out)
			}
			again, _ := tr.ToStorage(k, plain)
			if bytes.Equal(out, again) {
				t.Fatal("two encryptions of the same data are equal: no random nonce")
			}
			got, stale, err := tr.FromStorage(k, out)
			if err != nil || stale || !bytes.Equal(got, plain) {
				t.Fatalf("FromStorage = %q, %v, %v", got, stale, err)
			}
			out[len(out)-1] ^= 1
			if _, _, err := tr.FromStorage(k, out); err == nil {
				t.Fatal("tampered ciphertext decrypted")
			}
		})
	}
}

// Ciphertext produced by k8s.io/apiserver@v0.37.2's own transformers
// (NewGCMTransformer, NewCBCTransformer, NewSecretboxTransformer with the
// key "0123456789abcdef0123456789abcdef" and the authenticated data
// "/registry/secrets/default/kube-made"), behind kube's prefixes.
func TestDecryptsKubeCiphertext(t *testing.T) {
	plain := `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"kube-made","namespace":"default"},"data":{"k":"dg=="}}`
	k := kv.Key{Resource: "secrets", Namespace: "default", Name: "kube-made"}
	for _, tc := range []struct{ provider, prefix, hex string }{
		{"aesgcm", "k8s:enc:aesgcm:v1:key1:", "f9825bf407c8c5a61f0be9fba9960b6f5a41cb8bd5041a4232684c4cea2363fa15e34e1618395785ff8f8dda66f0c9227dd5ae447a16de465509ca666cf6f7a3eef2d82911b970bbb667efed28aef3303823bf4c9fb77832780986c6fd45e54938e63ef7cf36f1b9318f2aa4d9affb56a51edb9201e568e2bd868efee4e086382275610a1fe7b48b0b"},
		{"aescbc", "k8s:enc:aescbc:v1:key1:", "32c8c3c16a157a6335f2cd77c00a6c65c1907d230007ac506e3788cc5236ce3818795593b744aa65b1072c5d193a637bceb6e1dcbe8aa7a9c6e60185b677e34bac7f7f69fff06348d12844cf2c7ed78002833a96cae09ddc62400dc19ac4d7672785641817f9e31c286f13257ff79ec8b640e83f69ac3fefd23a910adf77cdf3"},
		{"secretbox", "k8s:enc:secretbox:v1:key1:", "966d7a041d1b96d0f44e7604a439a66287ac89fbe710f975e0dea4888d7e762efb8ad2f088dbc2a73982f9382f9d113fad120a397367632594c2ccf0c39b2b4b0256a85d1d6318e1561e785f7a230632e0da37aa8d4d67a06092cb30a0c8635af7762c4709fac50ae866464c3e824e41ab2f327a5c4ce8b7ba946ef996cbd1ddade78805fcb87c68ae2f0a6b6be7809262b8657a47"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			tr := mustParse(t, config("  - "+tc.provider+": {keys: [{name: key1, secret: "+key32+"}]}\n"))
			ct, err := hex.DecodeString(tc.hex)
			if err != nil {
				t.Fatal(err)
			}
			got, stale, err := tr.FromStorage(k, append([]byte(tc.prefix), ct...))
			if err != nil || stale || string(got) != plain {
				t.Fatalf("FromStorage = %q, %v, %v", got, stale, err)
			}
		})
	}
}

// The first key encrypts; every key decrypts; data of a later key or of a
// later provider is stale; identity reads plaintext but refuses
// ciphertext; a resource not listed passes through but refuses
// ciphertext.
func TestRotationAndStale(t *testing.T) {
	k := kv.Key{Resource: "secrets", Namespace: "ns", Name: "a"}
	plain := []byte(`{"kind":"Secret"}`)
	old := mustParse(t, config("  - aesgcm: {keys: [{name: old, secret: "+key32+"}]}\n"))
	rotated := mustParse(t, config("  - aesgcm: {keys: [{name: new, secret: "+other+"}, {name: old, secret: "+key32+"}]}\n  - identity: {}\n"))
	dropped := mustParse(t, config("  - aesgcm: {keys: [{name: new, secret: "+other+"}]}\n"))

	byOld, _ := old.ToStorage(k, plain)
	if got, stale, err := rotated.FromStorage(k, byOld); err != nil || !stale || !bytes.Equal(got, plain) {
		t.Fatalf("old key under rotated config: %q %v %v", got, stale, err)
	}
	byNew, _ := rotated.ToStorage(k, plain)
	if !bytes.HasPrefix(byNew, []byte("k8s:enc:aesgcm:v1:new:")) {
		t.Fatalf("rotated config wrote %q", byNew)
	}
	if _, stale, err := rotated.FromStorage(k, byNew); err != nil || stale {
		t.Fatalf("new key: stale %v err %v", stale, err)
	}
	if got, stale, err := rotated.FromStorage(k, plain); err != nil || !stale || !bytes.Equal(got, plain) {
		t.Fatalf("plaintext through identity: %q %v %v", got, stale, err)
	}
	if _, _, err := dropped.FromStorage(k, byOld); err == nil || !strings.Contains(err.Error(), "k8s:enc:aesgcm:v1:old:") {
		t.Fatalf("old data without the old key: %v", err)
	}
	if _, _, err := dropped.FromStorage(k, plain); err == nil {
		t.Fatal("plaintext read without identity")
	}
	// The ciphertext is bound to its key: moved to another name it fails.
	if _, _, err := rotated.FromStorage(kv.Key{Resource: "secrets", Namespace: "ns", Name: "b"}, byNew); err == nil {
		t.Fatal("ciphertext of ns/a decrypted as ns/b")
	}
	cm := kv.Key{Resource: "configmaps", Namespace: "ns", Name: "a"}
	if out, _ := rotated.ToStorage(cm, plain); !bytes.Equal(out, plain) {
		t.Fatalf("configmap stored as %q", out)
	}
	if _, _, err := rotated.FromStorage(cm, byNew); err == nil || !strings.Contains(err.Error(), "does not list configmaps") {
		t.Fatalf("ciphertext of an unlisted resource: %v", err)
	}
	idFirst := mustParse(t, config("  - identity: {}\n  - aesgcm: {keys: [{name: new, secret: "+other+"}]}\n"))
	if out, _ := idFirst.ToStorage(k, plain); !bytes.Equal(out, plain) {
		t.Fatalf("identity first wrote %q", out)
	}
	if got, stale, err := idFirst.FromStorage(k, byNew); err != nil || !stale || !bytes.Equal(got, plain) {
		t.Fatalf("identity first reading ciphertext: %q %v %v", got, stale, err)
	}
}

func TestWildcards(t *testing.T) {
	tr := mustParse(t, `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets, deployments.apps]
  providers: [{secretbox: {keys: [{name: a, secret: `+key32+`}]}}]
- resources: ["*.apps"]
  providers: [{aescbc: {keys: [{name: b, secret: `+key32+`}]}}]
- resources: ["*."]
  providers: [{aesgcm: {keys: [{name: c, secret: `+key32+`}]}}]
`)
	for res, want := range map[string]string{
		"secrets": "k8s:enc:secretbox:v1:a:", "deployments.apps": "k8s:enc:secretbox:v1:a:",
		"replicasets.apps": "k8s:enc:aescbc:v1:b:", "configmaps": "k8s:enc:aesgcm:v1:c:",
		"leases.coordination.k8s.io": "{",
	} {
		out, err := tr.ToStorage(kv.Key{Resource: res, Name: "x"}, []byte("{}"))
		if err != nil || !bytes.HasPrefix(out, []byte(want)) {
			t.Errorf("%s stored as %q (%v), want prefix %q", res, out, err, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	head := "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"
	for name, tc := range map[string]struct{ yaml, want string }{
		"kind":      {"apiVersion: v1\nkind: Config\nresources: []\n", "want kind EncryptionConfiguration"},
		"unknown":   {head + "resources: [{resources: [secrets], providers: [{identity: {}}], extra: 1}]\n", "unknown field"},
		"none":      {head + "resources: []\n", "at least one resources is required"},
		"kms":       {head + "resources: [{resources: [secrets], providers: [{kms: {name: x, endpoint: unix:///k.sock}}]}]\n", "not supported"},
		"two":       {head + "resources: [{resources: [secrets], providers: [{identity: {}, aesgcm: {keys: [{name: a, secret: " + key32 + "}]}}]}]\n", "more than one provider"},
		"short key": {head + "resources: [{resources: [secrets], providers: [{aesgcm: {keys: [{name: a, secret: " + base64.StdEncoding.EncodeToString([]byte("short")) + "}]}}]}]\n", "expected one of [16 24 32]"},
		"secretbox": {head + "resources: [{resources: [secrets], providers: [{secretbox: {keys: [{name: a, secret: " + key16 + "}]}}]}]\n", "expected one of [32]"},
		"base64":    {head + "resources: [{resources: [secrets], providers: [{aescbc: {keys: [{name: a, secret: '!!!'}]}}]}]\n", "base64"},
		"no keys":   {head + "resources: [{resources: [secrets], providers: [{aescbc: {keys: []}}]}]\n", "at least one keys"},
		"no name":   {head + "resources: [{resources: [secrets], providers: [{aescbc: {keys: [{secret: " + key32 + "}]}}]}]\n", "name is a mandatory field"},
		"star":      {head + "resources: [{resources: ['*'], providers: [{identity: {}}]}]\n", "use '*.'"},
		"capital":   {head + "resources: [{resources: [Secrets], providers: [{identity: {}}]}]\n", "capital letters"},
		"overlap":   {head + "resources: [{resources: [secrets, '*.'], providers: [{identity: {}}]}]\n", "overlapping"},
		"duplicate": {head + "resources: [{resources: [secrets, secrets], providers: [{identity: {}}]}]\n", "multiple times"},
		"masked":    {head + "resources: [{resources: ['*.*'], providers: [{identity: {}}]}, {resources: [secrets], providers: [{identity: {}}]}]\n", "masked"},
		"across":    {head + "resources: [{resources: ['secrets.*'], providers: [{identity: {}}]}]\n", "across groups"},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}
