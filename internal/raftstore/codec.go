package raftstore

import (
	"encoding/binary"
	"fmt"

	"github.com/litek8s/litek8s/internal/kv"
)

// A WAL record is a small binary header followed by the object's raw JSON:
//
//	version(1) op(1) uvarint(len)+resource uvarint(len)+namespace
//	uvarint(len)+name uvarint(expectedRV) uvarint(len)+expectedUID  object...
//
// The object bytes are appended as they are: never base64'd, never re-encoded.
const recordVersion = 1

// appendRecord appends the encoding of w to dst.
func appendRecord(dst []byte, w *kv.Write) []byte {
	dst = append(dst, recordVersion, byte(w.Op))
	dst = appendString(dst, w.Key.Resource)
	dst = appendString(dst, w.Key.Namespace)
	dst = appendString(dst, w.Key.Name)
	dst = binary.AppendUvarint(dst, w.ExpectedRV)
	dst = appendString(dst, w.ExpectedUID)
	return append(dst, w.Object...)
}

// encodeRecord returns the encoding of w in a buffer of the exact size.
func encodeRecord(w *kv.Write) []byte {
	n := 2 + 5*binary.MaxVarintLen64 + len(w.Key.Resource) + len(w.Key.Namespace) +
		len(w.Key.Name) + len(w.ExpectedUID) + len(w.Object)
	return appendRecord(make([]byte, 0, n), w)
}

// decodeRecord decodes a record. The returned Object aliases b.
func decodeRecord(b []byte) (kv.Write, error) {
	var w kv.Write
	if len(b) < 2 || b[0] != recordVersion {
		return w, fmt.Errorf("%w: bad header", errCorrupt)
	}
	w.Op = kv.Op(b[1])
	if w.Op < kv.OpCreate || w.Op > kv.OpDelete {
		return w, fmt.Errorf("%w: op %d", errCorrupt, b[1])
	}
	d := decoder{b: b[2:]}
	w.Key.Resource = d.string()
	w.Key.Namespace = d.string()
	w.Key.Name = d.string()
	w.ExpectedRV = d.uvarint()
	w.ExpectedUID = d.string()
	if d.err != nil {
		return w, d.err
	}
	if len(d.b) > 0 {
		w.Object = d.b
	}
	return w, nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// decoder reads header fields; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad varint", errCorrupt)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("%w: string length %d past end", errCorrupt, n)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
