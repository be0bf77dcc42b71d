package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
)

// ownObjects is how many ConfigMaps each client patches or updates in
// turn: its own, so that no two clients write the same object.
const ownObjects = 4

// prepareGet: each client reads random ConfigMaps of the list set.
func prepareGet(ctx context.Context, b *bench) (*prepared, error) {
	return loop(func(id string) ([]op, error) {
		ops := make([]op, b.opts.clients)
		for i := range ops {
			var buf bytes.Buffer
			ops[i] = func(ctx context.Context) error {
				name := fmt.Sprintf("cm-%06d", rand.IntN(b.opts.objects))
				if err := b.leader.do(ctx, call{method: http.MethodGet, path: cmPath(listNS) + "/" + name}, &buf); err != nil {
					return err
				}
				_, err := checkObject(buf.Bytes(), listNS, name)
				return err
			}
		}
		return ops, nil
	}), nil
}

// createOps are clients creating ConfigMaps with names unique to the run.
func createOps(ep *endpoint, s shape, clients int, prefix string) []op {
	ops := make([]op, clients)
	for i := range ops {
		var buf bytes.Buffer
		seq := 0
		ops[i] = func(ctx context.Context) error {
			seq++
			name := fmt.Sprintf("%s-%d-%d", prefix, i, seq)
			c := call{method: http.MethodPost, path: cmPath(writeNS), want: http.StatusCreated,
				body: s.configMap(writeNS, name, "", "", "")}
			if err := ep.do(ctx, c, &buf); err != nil {
				return err
			}
			_, err := checkObject(buf.Bytes(), writeNS, name)
			return err
		}
	}
	return ops
}

// prepareCreate: each client creates new ConfigMaps on the leader.
func prepareCreate(ctx context.Context, b *bench) (*prepared, error) {
	return loop(func(id string) ([]op, error) {
		return createOps(b.leader, b.shape, b.opts.clients, "c-"+id), nil
	}), nil
}

// prepareCreateSingle: create, on a second cluster of one member started
// for it (target 5 compares the two).
func prepareCreateSingle(ctx context.Context, b *bench) (*prepared, error) {
	cl, err := startCluster(ctx, b.clusterConfig("single", 1))
	if err != nil {
		return nil, err
	}
	if err := createNamespaces(ctx, cl.eps[0], writeNS); err != nil {
		cl.Close()
		return nil, err
	}
	p := loop(func(id string) ([]op, error) {
		return createOps(cl.eps[0], b.shape, b.opts.clients, "c1-"+id), nil
	})
	p.close = func() error {
		lvl := b.level.Level()
		b.level.Set(slog.LevelError + 100)
		defer b.level.Set(lvl)
		return cl.Close()
	}
	return p, nil
}

// ownedObjects creates each client's own ConfigMaps prefix-<client>-<k> and
// returns their resourceVersions.
func ownedObjects(ctx context.Context, b *bench, prefix string) ([][]string, error) {
	rvs := make([][]string, b.opts.clients)
	var buf bytes.Buffer
	for i := range rvs {
		for k := range ownObjects {
			name := fmt.Sprintf("%s-%d-%d", prefix, i, k)
			c := call{method: http.MethodPost, path: cmPath(writeNS), want: http.StatusCreated,
				body: b.shape.configMap(writeNS, name, "", "", "")}
			if err := b.leader.do(ctx, c, &buf); err != nil {
				return nil, err
			}
			rv, err := checkObject(buf.Bytes(), writeNS, name)
			if err != nil {
				return nil, err
			}
			rvs[i] = append(rvs[i], rv)
		}
	}
	return rvs, nil
}

// preparePatch: each client merge-patches its own ConfigMaps in turn.
func preparePatch(ctx context.Context, b *bench) (*prepared, error) {
	if _, err := ownedObjects(ctx, b, "p"); err != nil {
		return nil, err
	}
	return loop(func(id string) ([]op, error) {
		ops := make([]op, b.opts.clients)
		for i := range ops {
			var buf bytes.Buffer
			seq := 0
			ops[i] = func(ctx context.Context) error {
				seq++
				name := fmt.Sprintf("p-%d-%d", i, seq%ownObjects)
				c := call{method: http.MethodPatch, path: cmPath(writeNS) + "/" + name,
					contentType: "application/merge-patch+json",
					body:        fmt.Appendf(nil, `{"data":{"n":"%s-%d"}}`, id, seq)}
				if err := b.leader.do(ctx, c, &buf); err != nil {
					return err
				}
				_, err := checkObject(buf.Bytes(), writeNS, name)
				return err
			}
		}
		return ops, nil
	}), nil
}

// prepareUpdate: each client PUTs its own ConfigMaps in turn with the
// resourceVersion it got back last time, so a 409 is a bug.
func prepareUpdate(ctx context.Context, b *bench) (*prepared, error) {
	rvs, err := ownedObjects(ctx, b, "u")
	if err != nil {
		return nil, err
	}
	return loop(func(id string) ([]op, error) {
		ops := make([]op, b.opts.clients)
		for i := range ops {
			var buf bytes.Buffer
			seq := 0
			ops[i] = func(ctx context.Context) error {
				seq++
				k := seq % ownObjects
				name := fmt.Sprintf("u-%d-%d", i, k)
				c := call{method: http.MethodPut, path: cmPath(writeNS) + "/" + name,
					body: b.shape.configMap(writeNS, name, rvs[i][k], "", fmt.Sprintf("%s-%d", id, seq))}
				if err := b.leader.do(ctx, c, &buf); err != nil {
					return err
				}
				rv, err := checkObject(buf.Bytes(), writeNS, name)
				if err != nil {
					return err
				}
				if rv == rvs[i][k] {
					return fmt.Errorf("update of %s answered the old resourceVersion %s", name, rv)
				}
				rvs[i][k] = rv
				return nil
			}
		}
		return ops, nil
	}), nil
}
