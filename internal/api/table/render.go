package table

import (
	"time"
	"unicode/utf8"

	"github.com/litek8s/litek8s/internal/kv"
)

// AppendCells appends the JSON array of one row's cells. Clock cells (JSON
// nil) are rendered as the human duration from Since to now, or "<unknown>"
// when Since is zero, as kube's translateTimestampSince does. A cell holding
// a JSON string and a non-zero Since (pod Restarts with a last restart time)
// is rendered with " (<age> ago)" added inside the string: `"2 (5m ago)"`.
// The row is rendered in place (kv.Row.AppendJSON): nothing is allocated.
func AppendCells(dst []byte, row kv.Row, now time.Time) []byte {
	return row.AppendJSON(dst, func(dst []byte, since time.Time) []byte { return appendAge(dst, since, now) })
}

// appendCell appends one cell's JSON value, as AppendCells renders it.
func appendCell(dst []byte, c *kv.Cell, now time.Time) []byte {
	switch n := len(c.JSON); {
	case c.JSON == nil:
		return append(appendAge(append(dst, '"'), c.Since, now), '"')
	case !c.Since.IsZero() && n >= 2 && c.JSON[n-1] == '"':
		dst = append(dst, c.JSON[:n-1]...)
		return append(appendAge(append(dst, " ("...), c.Since, now), ` ago)"`...)
	}
	return append(dst, c.JSON...)
}

// appendString appends s as a JSON string, escaped exactly like
// encoding/json with HTML escaping (what kube-apiserver sends).
func appendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends the escaped contents of a JSON string, without the
// quotes. Invalid UTF-8 becomes U+FFFD; <, >, &, U+2028 and U+2029 are
// written as \u escapes.
func appendEscaped[S ~string | ~[]byte](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safeASCII(b) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendASCIIEscape(dst, b)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// safeASCII reports whether b needs no escape.
func safeASCII(b byte) bool {
	return b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
}

func appendASCIIEscape(dst []byte, b byte) []byte {
	switch b {
	case '"', '\\':
		return append(dst, '\\', b)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
}
