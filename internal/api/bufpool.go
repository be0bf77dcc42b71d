package api

import "sync"

// Response buffers are reused across requests.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

// putBuf returns a buffer, dropping huge ones so one big list does not pin
// memory forever.
func putBuf(b *[]byte) {
	if cap(*b) <= 16<<20 {
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}
