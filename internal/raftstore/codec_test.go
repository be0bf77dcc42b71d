package raftstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/litek8s/litek8s/internal/kv"
)

func TestRecordRoundTrip(t *testing.T) {
	obj := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u-1"},"data":{"k":"v \u00e9 \"q\" \\"}}`)
	key := kv.Key{Resource: "configmaps", Namespace: "ns", Name: "a"}
	tests := []struct {
		name string
		w    kv.Write
	}{
		{"create", kv.Write{Op: kv.OpCreate, Key: key, Object: obj}},
		{"create cluster-scoped", kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "namespaces", Name: "ns"}, Object: obj}},
		{"update", kv.Write{Op: kv.OpUpdate, Key: key, Object: obj}},
		{"update expected rv", kv.Write{Op: kv.OpUpdate, Key: key, ExpectedRV: 42, Object: obj}},
		{"update expected uid", kv.Write{Op: kv.OpUpdate, Key: key, ExpectedUID: "u-1", Object: obj}},
		{"update both preconditions", kv.Write{Op: kv.OpUpdate, Key: key, ExpectedRV: math.MaxUint64, ExpectedUID: "u-1", Object: obj}},
		{"delete", kv.Write{Op: kv.OpDelete, Key: key}},
		{"delete expected rv", kv.Write{Op: kv.OpDelete, Key: key, ExpectedRV: 7}},
		{"delete both preconditions", kv.Write{Op: kv.OpDelete, Key: key, ExpectedRV: 1 << 40, ExpectedUID: "u-1"}},
		{"unicode key", kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "widgets.example.com", Namespace: "nś", Name: "ünï"}, Object: []byte(`{}`)}},
		{"long names", kv.Write{Op: kv.OpCreate, Key: kv.Key{Resource: "configmaps", Namespace: string(bytes.Repeat([]byte("n"), 300)), Name: string(bytes.Repeat([]byte("m"), 300))}, Object: obj}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := encodeRecord(&tt.w)
			if app := appendRecord([]byte("prefix"), &tt.w); !bytes.Equal(app[len("prefix"):], enc) {
				t.Errorf("appendRecord differs from encodeRecord")
			}
			if len(tt.w.Object) > 0 && !bytes.HasSuffix(enc, tt.w.Object) {
				t.Errorf("encoded record does not end with the raw object bytes verbatim:\n%q", enc)
			}
			got, err := decodeRecord(enc)
			if err != nil {
				t.Fatalf("decodeRecord: %v", err)
			}
			if !reflect.DeepEqual(got, tt.w) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, tt.w)
			}
		})
	}
}

func TestRecordObjectVerbatim(t *testing.T) {
	// The raw JSON must be carried as is: not base64'd, not re-encoded
	// (whitespace, key order and escapes survive).
	obj := []byte("{ \"metadata\" : {\"name\":\"a\"},\n\t\"z\":1, \"a\":\"\\u003c\"}")
	enc := encodeRecord(&kv.Write{Op: kv.OpCreate, Key: cmKey("ns", "a"), Object: obj})
	if !bytes.Contains(enc, obj) {
		t.Fatalf("raw JSON not found verbatim in record %q", enc)
	}
	// version, op, 3 length-prefixed key parts, expectedRV, empty uid.
	if header, want := len(enc)-len(obj), 2+(1+len("configmaps"))+(1+len("ns"))+(1+len("a"))+1+1; header != want {
		t.Errorf("header is %d bytes, want %d", header, want)
	}
	got, err := decodeRecord(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Object, obj) {
		t.Errorf("decoded object %q, want %q", got.Object, obj)
	}
}

func TestDecodeRecordCorrupt(t *testing.T) {
	good := encodeRecord(&kv.Write{Op: kv.OpUpdate, Key: cmKey("ns", "name"), ExpectedRV: 300, ExpectedUID: "uid"})
	withLen := func(field int, n uint64) []byte {
		// a record whose field-th string (0 resource, 1 namespace, 2 name)
		// claims n bytes but the record ends there.
		b := []byte{recordVersion, byte(kv.OpCreate)}
		for i := 0; i < field; i++ {
			b = appendString(b, "x")
		}
		return binary.AppendUvarint(b, n)
	}
	tests := []struct {
		name string
		in   []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"version only", []byte{recordVersion}},
		{"bad version", append([]byte{recordVersion + 1}, good[1:]...)},
		{"version zero", append([]byte{0}, good[1:]...)},
		{"op zero", append([]byte{recordVersion, 0}, good[2:]...)},
		{"op past delete", append([]byte{recordVersion, byte(kv.OpDelete) + 1}, good[2:]...)},
		{"op 255", append([]byte{recordVersion, 255}, good[2:]...)},
		{"no fields", []byte{recordVersion, byte(kv.OpCreate)}},
		{"resource length past end", withLen(0, 5)},
		{"namespace length past end", withLen(1, 5)},
		{"name length past end", withLen(2, 1)},
		{"huge length", withLen(0, math.MaxUint64)},
		{"truncated varint", []byte{recordVersion, byte(kv.OpCreate), 0x80}},
		{"overflowing varint", append([]byte{recordVersion, byte(kv.OpCreate)}, bytes.Repeat([]byte{0xff}, 11)...)},
		{"missing expected rv", withLen(3, 0)[:len(withLen(3, 0))-1]},
		{"missing expected uid", good[:len(good)-len("uid")-1]},
		{"expected uid truncated", good[:len(good)-1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeRecord(tt.in)
			if !errors.Is(err, errCorrupt) {
				t.Errorf("decodeRecord(%x) = %v, want errCorrupt", tt.in, err)
			}
		})
	}
}

func FuzzDecodeRecord(f *testing.F) {
	obj := configMap("ns", "a", "u", map[string]string{"app": "x"}, 4)
	for _, w := range []kv.Write{
		{Op: kv.OpCreate, Key: cmKey("ns", "a"), Object: obj},
		{Op: kv.OpUpdate, Key: cmKey("ns", "a"), ExpectedRV: 1 << 33, ExpectedUID: "u", Object: obj},
		{Op: kv.OpDelete, Key: kv.Key{Resource: "nodes", Name: "n1"}, ExpectedRV: 9},
	} {
		f.Add(encodeRecord(&w))
	}
	f.Add([]byte{})
	f.Add([]byte{recordVersion, byte(kv.OpCreate), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := decodeRecord(b)
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("error %v is not errCorrupt", err)
			}
			return
		}
		// What decodes re-encodes to something that decodes the same.
		again, err := decodeRecord(encodeRecord(&w))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(again, w) {
			t.Fatalf("re-decode:\n got %+v\nwant %+v", again, w)
		}
		if len(w.Object) > 0 && !bytes.HasSuffix(b, w.Object) {
			t.Fatalf("object %q is not the tail of the record", w.Object)
		}
	})
}
