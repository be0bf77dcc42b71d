package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// eventTimeout is how long an event may take before it counts as missing.
const eventTimeout = 10 * time.Second

// watchEvent is one line of a watch stream, decoded as far as needed.
type watchEvent struct {
	Type   string `json:"type"`
	Object struct {
		Kind     string `json:"kind"`
		Message  string `json:"message"` // of an ERROR event's Status
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	} `json:"object"`
}

// currentRV returns the resourceVersion of ns's ConfigMap collection on ep.
func currentRV(ctx context.Context, ep *endpoint, ns string) (string, error) {
	var buf bytes.Buffer
	if err := ep.do(ctx, call{method: http.MethodGet, path: cmPath(ns) + "?limit=1"}, &buf); err != nil {
		return "", err
	}
	var l decodedList
	if err := json.Unmarshal(buf.Bytes(), &l); err != nil || l.Metadata.ResourceVersion == "" {
		return "", fmt.Errorf("list %s: no resourceVersion (%v)", ns, err)
	}
	return l.Metadata.ResourceVersion, nil
}

// eventStream is an open watch.
type eventStream struct {
	resp *http.Response
	dec  *json.Decoder
}

// openWatch starts a watch of ns's ConfigMaps on ep from rv (so that it
// sends only what is created after rv, whenever the server registers it)
// and returns once the response headers arrived.
func openWatch(ctx context.Context, ep *endpoint, ns, rv string) (*eventStream, error) {
	req, err := ep.newRequest(ctx, call{method: http.MethodGet,
		path: cmPath(ns) + "?watch=1&resourceVersion=" + rv})
	if err != nil {
		return nil, err
	}
	resp, err := ep.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("watch %s on %s: %w", ns, ep.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("watch %s on %s: %s: %s", ns, ep.name, resp.Status, b)
	}
	return &eventStream{resp: resp, dec: json.NewDecoder(resp.Body)}, nil
}

// next returns the next ADDED object's name; any other event is an error.
func (s *eventStream) next() (string, error) {
	var ev watchEvent
	if err := s.dec.Decode(&ev); err != nil {
		return "", err
	}
	if ev.Type != "ADDED" || ev.Object.Metadata.Name == "" {
		return "", fmt.Errorf("unexpected %s event (kind %q, name %q): %s", ev.Type, ev.Object.Kind,
			ev.Object.Metadata.Name, ev.Object.Message)
	}
	return ev.Object.Metadata.Name, nil
}

func (s *eventStream) close() { s.resp.Body.Close() }

// arrival is an event and when it was read.
type arrival struct {
	name string
	at   time.Time
}

// prepareWatchLatency: one client creates ConfigMaps on the leader one at
// a time; a watch held on a follower (the leader itself with one member)
// must deliver each ADDED. Latency: from sending the create to reading the
// event.
func prepareWatchLatency(ctx context.Context, b *bench) (*prepared, error) {
	if err := createNamespaces(ctx, b.leader, watchNS); err != nil {
		return nil, err
	}
	return &prepared{warmup: true, run: func(ctx context.Context, id string, d time.Duration) ([]time.Duration, time.Duration, error) {
		on := b.follower
		if on == nil {
			on = b.leader
		}
		rv, err := currentRV(ctx, b.leader, watchNS)
		if err != nil {
			return nil, 0, err
		}
		g := newGroup(ctx)
		wctx, stopWatch := context.WithCancel(g.ctx)
		defer stopWatch()
		stream, err := openWatch(wctx, on, watchNS, rv)
		if err != nil {
			g.Wait()
			return nil, 0, err
		}
		defer stream.close()
		events := make(chan arrival, 64)
		g.Go(func(ctx context.Context) error {
			for {
				name, err := stream.next()
				if wctx.Err() != nil {
					return nil
				}
				if err != nil {
					return fmt.Errorf("watch on %s: %w", on.name, err)
				}
				select {
				case events <- arrival{name, time.Now()}:
				case <-ctx.Done():
					return nil
				}
			}
		})
		var lats []time.Duration
		var elapsed time.Duration
		g.Go(func(ctx context.Context) error {
			defer stopWatch()
			var buf bytes.Buffer
			start := time.Now()
			defer func() { elapsed = time.Since(start) }()
			for seq := 0; time.Since(start) < d; seq++ {
				name := fmt.Sprintf("w-%s-%d", id, seq)
				t0 := time.Now()
				c := call{method: http.MethodPost, path: cmPath(watchNS), want: http.StatusCreated,
					body: b.shape.configMap(watchNS, name, "", "", "")}
				if err := b.leader.do(ctx, c, &buf); err != nil {
					return err
				}
				select {
				case a := <-events:
					if a.name != name {
						return fmt.Errorf("watch on %s: got ADDED %s, want %s", on.name, a.name, name)
					}
					lats = append(lats, a.at.Sub(t0))
				case <-time.After(eventTimeout):
					return fmt.Errorf("watch on %s: no ADDED for %s after %v", on.name, name, eventTimeout)
				case <-ctx.Done():
					return context.Cause(ctx)
				}
			}
			return nil
		})
		if err := g.Wait(); err != nil {
			return nil, 0, err
		}
		return lats, elapsed, nil
	}}, nil
}

// round is one create that every fan-out watcher must see.
type round struct {
	name string
	left atomic.Int64
	last time.Time // when the last watcher read it; set before done closes
	done chan struct{}
}

// prepareWatchFanout: -watchers watches spread over the members, one
// create at a time on the leader; an op is one create, its latency the
// time until every watcher has read its ADDED.
func prepareWatchFanout(ctx context.Context, b *bench) (*prepared, error) {
	if err := createNamespaces(ctx, b.leader, fanoutNS); err != nil {
		return nil, err
	}
	return &prepared{run: func(ctx context.Context, id string, d time.Duration) ([]time.Duration, time.Duration, error) {
		return fanout(ctx, b, id, d)
	}}, nil
}

func fanout(ctx context.Context, b *bench, id string, d time.Duration) ([]time.Duration, time.Duration, error) {
	rv, err := currentRV(ctx, b.leader, fanoutNS)
	if err != nil {
		return nil, 0, err
	}
	// Transports of their own: each watch holds a connection for the run.
	eps := make([]*endpoint, len(b.cl.eps))
	for i, ep := range b.cl.eps {
		eps[i] = newEndpoint(ep.name, ep.url, ep.token, b.cl.ca, 0, ep.timeout)
		defer eps[i].tr.CloseIdleConnections()
	}
	g := newGroup(ctx)
	wctx, stopWatches := context.WithCancel(g.ctx)
	defer stopWatches()
	var cur atomic.Pointer[round]
	var opened sync.WaitGroup
	sem := make(chan struct{}, 32) // concurrent TLS handshakes
	n := b.opts.watchers
	for i := range n {
		opened.Add(1)
		g.Go(func(context.Context) error {
			ep := eps[i%len(eps)]
			sem <- struct{}{}
			stream, err := openWatch(wctx, ep, fanoutNS, rv)
			<-sem
			opened.Done()
			if err != nil {
				return fmt.Errorf("watcher %d: %w", i, err)
			}
			defer stream.close()
			for {
				name, err := stream.next()
				if wctx.Err() != nil {
					return nil
				}
				if err != nil {
					return fmt.Errorf("watcher %d on %s: %w", i, ep.name, err)
				}
				r := cur.Load()
				if r == nil || r.name != name {
					return fmt.Errorf("watcher %d on %s: unexpected ADDED %s", i, ep.name, name)
				}
				if r.left.Add(-1) == 0 {
					r.last = time.Now()
					close(r.done)
				}
			}
		})
	}
	var lats []time.Duration
	var elapsed time.Duration
	g.Go(func(ctx context.Context) error {
		defer stopWatches()
		allOpen := make(chan struct{})
		go func() { opened.Wait(); close(allOpen) }()
		select {
		case <-allOpen:
			if ctx.Err() != nil {
				return nil // a watcher that failed to open fails the run
			}
		case <-time.After(time.Minute):
			return fmt.Errorf("%d watches not open after a minute", n)
		}
		var buf bytes.Buffer
		start := time.Now()
		defer func() { elapsed = time.Since(start) }()
		for seq := 0; time.Since(start) < d; seq++ {
			r := &round{name: fmt.Sprintf("f-%s-%d", id, seq), done: make(chan struct{})}
			r.left.Store(int64(n))
			cur.Store(r)
			t0 := time.Now()
			c := call{method: http.MethodPost, path: cmPath(fanoutNS), want: http.StatusCreated,
				body: b.shape.configMap(fanoutNS, r.name, "", "", "")}
			if err := b.leader.do(ctx, c, &buf); err != nil {
				return err
			}
			select {
			case <-r.done:
				lats = append(lats, r.last.Sub(t0))
			case <-time.After(eventTimeout):
				return fmt.Errorf("after %v only %d of %d watchers had ADDED %s", eventTimeout, n-int(r.left.Load()), n, r.name)
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() == nil {
			err = fmt.Errorf("watch_fanout: %w", err)
		}
		return nil, 0, err
	}
	return lats, elapsed, nil
}
