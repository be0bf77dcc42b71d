package faultnet

import (
	"bufio"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// echo serves lines back until the client closes.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip writes a line and reads it back within d.
func roundTrip(c net.Conn, r *bufio.Reader, d time.Duration) (time.Duration, error) {
	start := time.Now()
	c.SetDeadline(start.Add(d))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	_, err := r.ReadString('\n')
	return time.Since(start), err
}

func TestProxy(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	p, err := Listen("127.0.0.1:0", echo(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	if _, err := roundTrip(c, r, 2*time.Second); err != nil {
		t.Fatalf("pass: %v", err)
	}

	p.Set(Fault{Delay: 50 * time.Millisecond})
	if d, err := roundTrip(c, r, 2*time.Second); err != nil || d < 100*time.Millisecond {
		t.Fatalf("delay 50ms each way: round trip %v, %v", d, err)
	}

	p.Set(Fault{Mode: Blackhole})
	if _, err := roundTrip(c, r, 300*time.Millisecond); err == nil {
		t.Fatal("blackhole: the echo came back")
	}
	c.SetDeadline(time.Time{})
	p.Heal() // what was held goes through once healed
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("after healing: %q %v", line, err)
	}

	// rules by source: 127.0.0.1 dropped, others pass
	p.Set(Fault{Mode: Drop}, "127.0.0.1")
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Fatal("drop: the connection stayed open")
	}
	c.Close()
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		c2.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := roundTrip(c2, bufio.NewReader(c2), time.Second); err == nil {
			t.Fatal("drop: a new connection was forwarded")
		}
		c2.Close()
	}
	if c3, err := net.DialTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, mustResolve(t, p.Addr())); err != nil {
		t.Fatalf("dial from 127.0.0.2: %v", err)
	} else {
		if _, err := roundTrip(c3, bufio.NewReader(c3), 2*time.Second); err != nil {
			t.Fatalf("another source passes: %v", err)
		}
		c3.Close()
	}
	p.Heal()
	c4, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(c4, bufio.NewReader(c4), 2*time.Second); err != nil {
		t.Fatalf("healed: %v", err)
	}
	// Close ends open (and blackholed) connections and every goroutine
	p.Set(Fault{Mode: Blackhole})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	c4.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c4.Read(make([]byte, 1)); err == nil {
		t.Error("a connection survived Close")
	}
	c4.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > goroutines+2 && time.Now().Before(deadline) { // +2: the echo server's
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines+2 {
		t.Errorf("goroutines: %d before, %d after", goroutines, n)
	}
}

func mustResolve(t *testing.T, addr string) *net.TCPAddr {
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
