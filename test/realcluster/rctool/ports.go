package main

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// reserved are ports other tests of the project listen on.
var reserved = map[int]bool{6443: true, 7000: true, 9090: true}

// runPorts prints N distinct TCP ports, one a line, that are free on every
// address right now. They are drawn from 20000-29999, below the kernel's
// ephemeral range, so an outgoing connection is unlikely to take one before
// the component that is given it binds it.
func runPorts(args []string) error {
	fs := flag.NewFlagSet("ports", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	n := 1
	if fs.NArg() > 0 {
		v, err := strconv.Atoi(fs.Arg(0))
		if err != nil || v < 1 {
			return fmt.Errorf("ports: bad count %q", fs.Arg(0))
		}
		n = v
	}
	seen := map[int]bool{}
	for tries := 0; len(seen) < n; tries++ {
		if tries > 10000 {
			return errors.New("ports: no free port found")
		}
		p := 20000 + rand.IntN(10000)
		if seen[p] || reserved[p] || !free(p) {
			continue
		}
		seen[p] = true
		fmt.Println(p)
	}
	return nil
}

// free reports whether TCP and UDP port p can be bound on all addresses (a
// dual-stack wildcard bind fails if any address already has the port).
func free(p int) bool {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	l.Close()
	c, err := net.ListenPacket("udp", ":"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	c.Close()
	return true
}
