package raftstore

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"
)

func TestSpliceRV(t *testing.T) {
	tests := []struct {
		name string
		in   string
		rv   uint64
		want string
	}{
		{
			name: "inserts in alphabetical position when metadata keys are sorted (custom resources)",
			in:   `{"apiVersion":"g/v1","kind":"W","metadata":{"creationTimestamp":"t","generation":1,"name":"a","namespace":"n","uid":"u"}}`,
			rv:   9,
			want: `{"apiVersion":"g/v1","kind":"W","metadata":{"creationTimestamp":"t","generation":1,"name":"a","namespace":"n","resourceVersion":"9","uid":"u"}}`,
		},
		{
			name: "inserts after uid in Go struct order",
			in:   `{"metadata":{"name":"a","namespace":"n","uid":"u","creationTimestamp":"t"}}`,
			rv:   9,
			want: `{"metadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"9","creationTimestamp":"t"}}`,
		},
		{
			name: "replaces existing value",
			in:   `{"metadata":{"name":"a","resourceVersion":"12","uid":"u"},"spec":{}}`,
			rv:   345,
			want: `{"metadata":{"name":"a","resourceVersion":"345","uid":"u"},"spec":{}}`,
		},
		{
			name: "replaces a numeric or null value with a string",
			in:   `{"metadata":{"resourceVersion":7}}`,
			rv:   8,
			want: `{"metadata":{"resourceVersion":"8"}}`,
		},
		{
			name: "replaces empty string",
			in:   `{"metadata":{"name":"a","resourceVersion":""}}`,
			rv:   1,
			want: `{"metadata":{"name":"a","resourceVersion":"1"}}`,
		},
		{
			name: "replaces top-level key only, not nested ones",
			in:   `{"metadata":{"name":"a","managedFields":[{"resourceVersion":"x"}],"resourceVersion":"3"},"resourceVersion":"y"}`,
			rv:   4,
			want: `{"metadata":{"name":"a","managedFields":[{"resourceVersion":"x"}],"resourceVersion":"4"},"resourceVersion":"y"}`,
		},
		{
			name: "inserted after uid",
			in:   `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u","creationTimestamp":null},"data":{}}`,
			rv:   10,
			want: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","uid":"u","resourceVersion":"10","creationTimestamp":null},"data":{}}`,
		},
		{
			name: "inserted after namespace",
			in:   `{"metadata":{"name":"a","namespace":"ns","labels":{"uid":"no"}}}`,
			rv:   11,
			want: `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"11","labels":{"uid":"no"}}}`,
		},
		{
			name: "inserted after generateName",
			in:   `{"metadata":{"name":"a-x","generateName":"a-","generation":2}}`,
			rv:   12,
			want: `{"metadata":{"name":"a-x","generateName":"a-","resourceVersion":"12","generation":2}}`,
		},
		{
			name: "inserted after name",
			in:   `{"metadata":{"name":"a","labels":{"x":"y"}}}`,
			rv:   13,
			want: `{"metadata":{"name":"a","resourceVersion":"13","labels":{"x":"y"}}}`,
		},
		{
			name: "inserted after name as the last key",
			in:   `{"metadata":{"name":"a"}}`,
			rv:   14,
			want: `{"metadata":{"name":"a","resourceVersion":"14"}}`,
		},
		{
			name: "first key when none of the leading keys",
			in:   `{"metadata":{"labels":{"name":"x"},"annotations":{}}}`,
			rv:   15,
			want: `{"metadata":{"resourceVersion":"15","labels":{"name":"x"},"annotations":{}}}`,
		},
		{
			name: "empty metadata",
			in:   `{"kind":"X","metadata":{},"spec":1}`,
			rv:   16,
			want: `{"kind":"X","metadata":{"resourceVersion":"16"},"spec":1}`,
		},
		{
			name: "empty metadata with whitespace",
			in:   `{"metadata": { } }`,
			rv:   17,
			want: `{"metadata": {"resourceVersion":"17" } }`,
		},
		{
			name: "whitespace around values",
			in:   "{ \"metadata\" : {\n  \"name\" : \"a\" ,\n  \"labels\" : {}\n} }",
			rv:   18,
			want: "{ \"metadata\" : {\n  \"name\" : \"a\",\"resourceVersion\":\"18\" ,\n  \"labels\" : {}\n} }",
		},
		{
			name: "metadata absent",
			in:   `{"id":"n1","raftAddr":"127.0.0.1:1"}`,
			rv:   19,
			want: `{"id":"n1","raftAddr":"127.0.0.1:1"}`,
		},
		{
			name: "metadata not an object",
			in:   `{"metadata":null}`,
			rv:   20,
			want: `{"metadata":null}`,
		},
		{
			name: "max uint64",
			in:   `{"metadata":{"name":"a"}}`,
			rv:   18446744073709551615,
			want: `{"metadata":{"name":"a","resourceVersion":"18446744073709551615"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			orig := bytes.Clone(in)
			got := spliceRV(in, tt.rv)
			if string(got) != tt.want {
				t.Errorf("spliceRV(%s, %d)\n got %s\nwant %s", tt.in, tt.rv, got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("output is not valid JSON: %s", got)
			}
			if !bytes.Equal(in, orig) {
				t.Errorf("input modified: %s", in)
			}
			if len(got) > 0 && len(in) > 0 && &got[0] == &in[0] {
				t.Errorf("output aliases the input")
			}
			if gjson.GetBytes(got, "metadata").IsObject() {
				if rv := gjson.GetBytes(got, "metadata.resourceVersion").Uint(); rv != tt.rv {
					t.Errorf("metadata.resourceVersion = %d, want %d", rv, tt.rv)
				}
			}
		})
	}
}

func TestSpliceRVOutputDoesNotShareCapacity(t *testing.T) {
	// Appending to the output (as a list writer might) must not write into
	// the input, for every branch of spliceRV.
	for _, in := range []string{
		`{"metadata":{"resourceVersion":"1"}}`,
		`{"metadata":{"name":"a"}}`,
		`{"metadata":{}}`,
		`{"x":1}`,
	} {
		buf := make([]byte, len(in), len(in)+64)
		copy(buf, in)
		out := spliceRV(buf, 2)
		_ = append(out, "garbage"...)
		if string(buf) != in || string(buf[:cap(buf)][len(in):len(in)+7]) == "garbage" {
			t.Errorf("spliceRV(%s) output shares the input's memory", in)
		}
	}
}
