package faultnet

import (
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Mode is what a proxy does with a source's traffic.
type Mode int

const (
	// Pass forwards traffic (after Fault.Delay).
	Pass Mode = iota
	// Blackhole accepts connections and reads nothing from them and
	// forwards nothing: a partition that does not reset connections.
	Blackhole
	// Drop closes the source's connections and refuses new ones (accepted
	// and closed at once): a partition that resets.
	Drop
)

// Fault is the behaviour for one source (or every source).
type Fault struct {
	Mode Mode
	// Delay is added before each chunk forwarded in either direction.
	Delay time.Duration
}

// Proxy forwards the TCP connections it accepts to a target.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex // guards everything below
	def    Fault
	by     map[string]Fault // by source IP
	conns  map[*link]struct{}
	change chan struct{} // closed and replaced on every Set
	closed bool
	wg     sync.WaitGroup
}

// Listen starts a proxy on addr (host:0 picks a port) that forwards to
// target.
func Listen(addr, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, by: map[string]Fault{}, conns: map[*link]struct{}{}, change: make(chan struct{})}
	p.wg.Add(1)
	go func() { defer p.wg.Done(); p.accept() }()
	return p, nil
}

// Addr is the address peers dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Set makes sources (IPs; none: every source without a rule of its own)
// get f from now on, for the connections they have and the ones they open.
func (p *Proxy) Set(f Fault, sources ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(sources) == 0 {
		p.def = f
	}
	for _, s := range sources {
		p.by[s] = f
	}
	close(p.change)
	p.change = make(chan struct{})
	for l := range p.conns {
		if p.faultLocked(l.source).Mode == Drop {
			l.close()
		}
	}
}

// Heal removes every rule: all traffic passes.
func (p *Proxy) Heal() {
	p.mu.Lock()
	p.by = map[string]Fault{}
	p.mu.Unlock()
	p.Set(Fault{})
}

func (p *Proxy) faultLocked(source string) Fault {
	if f, ok := p.by[source]; ok {
		return f
	}
	return p.def
}

// fault returns source's fault and a channel closed at the next Set.
func (p *Proxy) fault(source string) (Fault, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.faultLocked(source), p.change
}

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for l := range p.conns {
		l.close()
	}
	close(p.change)
	p.change = make(chan struct{})
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		source, _, _ := net.SplitHostPort(c.RemoteAddr().String())
		p.mu.Lock()
		if p.closed || p.faultLocked(source).Mode == Drop {
			p.mu.Unlock()
			c.Close()
			continue
		}
		l := &link{client: c, source: source, done: make(chan struct{})}
		p.conns[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go func() {
			defer p.wg.Done()
			p.serve(l)
			p.mu.Lock()
			delete(p.conns, l)
			p.mu.Unlock()
		}()
	}
}

// link is one proxied connection.
type link struct {
	client, server net.Conn
	source         string
	done           chan struct{} // closed by close
	once           sync.Once
	mu             sync.Mutex // guards server while it is dialled
}

func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		l.client.Close()
		l.mu.Lock()
		if l.server != nil {
			l.server.Close()
		}
		l.mu.Unlock()
	})
}

func (p *Proxy) serve(l *link) {
	defer l.close()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	l.mu.Lock()
	l.server = server
	l.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	for _, dir := range [][2]net.Conn{{server, l.client}, {l.client, server}} {
		go func() {
			defer wg.Done()
			if !p.pipe(l, dir[0], dir[1]) {
				l.close() // not a clean end: the other direction ends too
			}
		}()
	}
	wg.Wait()
}

// pipe copies src to dst chunk by chunk, applying the source's fault
// before each read: a blackholed source's bytes stay unread (TCP's own
// windows then stall the sender, as on a real partition). It reports
// whether src ended cleanly (EOF, passed on as a half-close).
func (p *Proxy) pipe(l *link, dst, src net.Conn) (eof bool) {
	buf := make([]byte, 32<<10)
	for {
		if !p.admit(l) {
			return false
		}
		n, err := src.Read(buf)
		if n > 0 {
			// the rules may have changed while the read waited
			if !p.admit(l) {
				return false
			}
			if f, _ := p.fault(l.source); f.Delay > 0 {
				time.Sleep(f.Delay)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return false
			}
		}
		if err != nil {
			tc, ok := dst.(*net.TCPConn)
			if ok && errors.Is(err, io.EOF) {
				tc.CloseWrite() // pass the half-close on
				return true
			}
			return false
		}
	}
}

// admit waits while l's source is blackholed and reports whether its
// traffic may go on (false: dropped, or the link closed).
func (p *Proxy) admit(l *link) bool {
	for {
		f, change := p.fault(l.source)
		switch f.Mode {
		case Drop:
			return false
		case Pass:
			return true
		}
		select { // Blackhole: until the rules change or the link closes
		case <-change:
		case <-l.done:
			return false
		}
	}
}
