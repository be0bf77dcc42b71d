package raftstore

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/litek8s/litek8s/internal/kv"
)

// FuzzRecordRoundTrip: every write survives encode + decode (the decoder's
// own target, FuzzDecodeRecord, is in codec_test.go).
//
//	go test -run xxx -fuzz FuzzRecordRoundTrip -fuzztime 30s ./internal/raftstore/
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add(uint8(1), "configmaps", "ns", "a", uint64(0), "", []byte(`{}`))
	f.Add(uint8(3), "", "", "", uint64(1<<63), "uid", []byte(nil))
	f.Fuzz(func(t *testing.T, op uint8, res, ns, name string, rv uint64, uid string, obj []byte) {
		op = op%3 + 1
		in := kv.Write{Op: kv.Op(op), Key: kv.Key{Resource: res, Namespace: ns, Name: name}, ExpectedRV: rv,
			ExpectedUID: uid, Object: obj}
		out, err := decodeRecord(encodeRecord(&in))
		if err != nil {
			t.Fatalf("decode(encode(%+v)): %v", in, err)
		}
		if out.Op != in.Op || out.Key != in.Key || out.ExpectedRV != in.ExpectedRV || out.ExpectedUID != in.ExpectedUID ||
			!bytes.Equal(out.Object, in.Object) {
			t.Fatalf("round trip: %+v became %+v", in, out)
		}
	})
}

// FuzzSpliceRV: on any bytes spliceRV does not panic and leaves its input
// alone; on a JSON object with a metadata object the result is valid JSON
// whose metadata.resourceVersion is rv and which, without it, is the
// input without it.
//
//	go test -run xxx -fuzz FuzzSpliceRV -fuzztime 30s ./internal/raftstore/
func FuzzSpliceRV(f *testing.F) {
	for _, s := range []string{
		`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"b","uid":"u","creationTimestamp":null}}`,
		`{"metadata":{"resourceVersion":"7","name":"x"},"data":{}}`,
		`{"metadata":{}}`,
		`{"metadata":{"annotations":{"a":"b"},"name":"n"},"spec":{"metadata":{"name":"inner"}}}`,
		`{ "metadata" : { "name" : "spaced" } }`,
		`{"metadata":null}`,
		`[1,2]`,
		`{"metadata":{"name":"a\"b","labels":{"resourceVersion":"1"}}}`,
	} {
		f.Add([]byte(s), uint64(42))
	}
	f.Fuzz(func(t *testing.T, raw []byte, rv uint64) {
		in := bytes.Clone(raw)
		out := spliceRV(raw, rv)
		if !bytes.Equal(raw, in) {
			t.Fatal("spliceRV modified its input")
		}
		var obj map[string]any
		if json.Unmarshal(raw, &obj) != nil {
			return // not an object: anything but a panic will do
		}
		meta, ok := obj["metadata"].(map[string]any)
		if !ok || !gjson.ValidBytes(raw) {
			return
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("spliceRV(%q) = %q: not JSON: %v", raw, out, err)
		}
		gm, _ := got["metadata"].(map[string]any)
		if gm == nil || gm["resourceVersion"] != strconv.FormatUint(rv, 10) {
			t.Fatalf("spliceRV(%q, %d) = %q: resourceVersion not stamped", raw, rv, out)
		}
		delete(gm, "resourceVersion")
		delete(meta, "resourceVersion")
		a, _ := json.Marshal(obj)
		b, _ := json.Marshal(got)
		if !bytes.Equal(a, b) {
			t.Fatalf("spliceRV(%q) = %q changed more than the resourceVersion", raw, out)
		}
	})
}
