package api

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"
)

// pods/log over WebSocket: kube-apiserver serves a streamed GET that asks
// for a WebSocket upgrade through wsstream's Reader (its StreamObject):
// an empty message first, then each chunk of the log as one message,
// base64-encoded text under base64.binary.k8s.io, binary under
// binary.k8s.io or no subprotocol. The e2e "logs … over websockets" test
// and browser consoles read logs this way.

// isLogWebSocket reports whether r asks for the log over a WebSocket
// (HTTP/1.1 only: an HTTP/2 request cannot upgrade).
func isLogWebSocket(r *http.Request) bool {
	return r.ProtoMajor == 1 && wsstream.IsWebSocketRequest(r)
}

// checkLogWebSocket refuses (400) an upgrade wsstream's handshake would
// fail: wsstream.Reader.Copy never returns when the handshake fails, so
// such a request must not reach it.
func checkLogWebSocket(r *http.Request) error {
	switch {
	case r.Header.Get("Sec-WebSocket-Key") == "":
		return badRequest("a WebSocket upgrade needs Sec-WebSocket-Key")
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		return badRequest("unsupported WebSocket version %q: supports 13", r.Header.Get("Sec-WebSocket-Version"))
	}
	offered := strings.TrimSpace(r.Header.Get("Sec-WebSocket-Protocol"))
	if offered == "" {
		return nil // binary
	}
	supported := wsstream.NewDefaultReaderProtocols()
	for _, p := range strings.Split(offered, ",") {
		if _, ok := supported[strings.TrimSpace(p)]; ok {
			return nil
		}
	}
	return badRequest("requested WebSocket protocol(s) %q are not supported: supports binary.k8s.io and base64.binary.k8s.io", offered)
}

// serveLogWebSocket upgrades r and sends body over the WebSocket until it
// ends or the client goes away; cancel stops the kubelet's stream and is
// called as soon as the connection closes (a following log can wait long
// for its next line, and wsstream only notices the client when it writes).
func serveLogWebSocket(w http.ResponseWriter, r *http.Request, body io.Reader, cancel context.CancelFunc) error {
	rd := wsstream.NewReader(dataThenErr{body}, true, wsstream.NewDefaultReaderProtocols())
	return rd.Copy(&hijacker{ResponseWriter: w, onClose: cancel}, r)
}

// hijacker gives wsstream (which type-asserts http.Hijacker) the
// connection under the API's wrapped ResponseWriter, and tells onClose
// when that connection closes.
type hijacker struct {
	http.ResponseWriter
	onClose func()
}

func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	hc := &hijackedConn{Conn: c, onClose: h.onClose}
	brw.Writer.Reset(hc)
	return hc, brw, nil
}

// hijackedConn is the upgraded connection. Its first write is the
// handshake's answer: a failure there is not reported, because wsstream
// would then wait forever for a stream that never starts; the stream's
// first message meets the same failure and ends it.
type hijackedConn struct {
	net.Conn
	onClose   func()
	closeOnce sync.Once
	wroteOnce sync.Once
}

func (c *hijackedConn) Write(p []byte) (int, error) {
	first := false
	c.wroteOnce.Do(func() { first = true })
	n, err := c.Conn.Write(p)
	if first && err != nil {
		return len(p), nil
	}
	return n, err
}

func (c *hijackedConn) Close() error {
	c.closeOnce.Do(c.onClose)
	return c.Conn.Close()
}

// dataThenErr returns data and the error that ends a stream in separate
// reads: wsstream drops the data of a read that also returns io.EOF, which
// an HTTP body with a Content-Length does on its last read.
type dataThenErr struct{ r io.Reader }

func (d dataThenErr) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		return n, nil // the error, if any, comes again on the next read
	}
	return n, err
}
