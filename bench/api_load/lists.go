package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/tidwall/gjson"
)

// tableAccept is what kubectl get sends.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// selectorQuery matches 1/groups of the list objects.
const selectorQuery = "?labelSelector=" + "bench-group%3Dg0"

// listCheck is what a list response must hold.
type listCheck struct {
	kind  string // ConfigMapList or Table
	items int
	group string // every item's bench-group label, when set
}

// decodedList is a List or a Table, decoded to check it.
type decodedList struct {
	Kind     string `json:"kind"`
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
	Rows  []struct {
		Cells  []json.RawMessage `json:"cells"`
		Object struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"object"`
	} `json:"rows"`
}

// verifyList decodes a whole List or Table and checks it against want; it
// returns the decoded list and the total size of the items' JSON.
func verifyList(body []byte, want listCheck) (*decodedList, int64, error) {
	var l decodedList
	if err := json.Unmarshal(body, &l); err != nil {
		return nil, 0, fmt.Errorf("decoding a %d-byte %s: %w", len(body), want.kind, err)
	}
	if l.Kind != want.kind {
		return nil, 0, fmt.Errorf("got kind %q, want %s", l.Kind, want.kind)
	}
	n := len(l.Items)
	if want.kind == "Table" {
		n = len(l.Rows)
		for i, r := range l.Rows {
			if len(r.Cells) == 0 || r.Object.Metadata.Name == "" {
				return nil, 0, fmt.Errorf("table row %d has no cells or no object name", i)
			}
		}
	}
	if want.items >= 0 && n != want.items {
		return nil, 0, fmt.Errorf("%s with %d items, want %d", want.kind, n, want.items)
	}
	var stored int64
	for i, it := range l.Items {
		stored += int64(len(it))
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(it, &o); err != nil {
			return nil, 0, fmt.Errorf("item %d: %w", i, err)
		}
		if o.Metadata.Name == "" || (want.group != "" && o.Metadata.Labels["bench-group"] != want.group) {
			return nil, 0, fmt.Errorf("item %d: name %q labels %v, want bench-group=%s", i, o.Metadata.Name, o.Metadata.Labels, want.group)
		}
	}
	if l.Metadata.ResourceVersion == "" {
		return nil, 0, fmt.Errorf("%s without metadata.resourceVersion", want.kind)
	}
	return &l, stored, nil
}

// listPrepared is a scenario whose clients send c to ep, each response
// checked as the -verify flag says: "all" decodes every one; "sample" (the
// default) decodes one response before the run and then checks each
// timed response's status, length (within tol of the sampled one) and
// closing brace, because decoding a large list in this process would cost
// more CPU than serving it and measure the client.
//
// epOf returns the endpoint to load; it is called again for each run, after
// the bench found the leader again.
func listPrepared(ctx context.Context, b *bench, epOf func() *endpoint, c call, want listCheck, tol float64) (*prepared, error) {
	ep := epOf()
	var buf bytes.Buffer
	if err := ep.do(ctx, c, &buf); err != nil {
		return nil, err
	}
	if _, _, err := verifyList(buf.Bytes(), want); err != nil {
		return nil, fmt.Errorf("%s%s: %w", ep.name, c.path, err)
	}
	ref := int64(buf.Len())
	slack := int64(float64(ref)*tol) + 64
	return loop(func(string) ([]op, error) {
		ep := epOf()
		ops := make([]op, b.opts.clients)
		for i := range ops {
			if b.opts.verify == "all" {
				var buf bytes.Buffer
				ops[i] = func(ctx context.Context) error {
					if err := ep.do(ctx, c, &buf); err != nil {
						return err
					}
					_, _, err := verifyList(buf.Bytes(), want)
					return err
				}
				continue
			}
			scratch := make([]byte, 64<<10)
			ops[i] = func(ctx context.Context) error {
				s, err := ep.stream(ctx, c, scratch)
				if err != nil {
					return err
				}
				if d := s.n - ref; d > slack || d < -slack || s.last != '}' {
					return fmt.Errorf("%s%s: %d-byte body ending in %q, want about %d bytes ending in '}'",
						ep.name, c.path, s.n, s.last, ref)
				}
				return nil
			}
		}
		return ops, nil
	}), nil
}

func allItems(b *bench) listCheck {
	return listCheck{kind: "ConfigMapList", items: listed(b.opts.objects)}
}

func selectedItems(b *bench) listCheck {
	return listCheck{kind: "ConfigMapList", items: (b.opts.objects + groups - 1) / groups, group: "g0"}
}

func prepareListAll(ctx context.Context, b *bench) (*prepared, error) {
	return listPrepared(ctx, b, b.leaderNow, call{method: http.MethodGet, path: cmPath(listNS)}, allItems(b), 0)
}

func prepareListSelector(ctx context.Context, b *bench) (*prepared, error) {
	return listPrepared(ctx, b, b.leaderNow, call{method: http.MethodGet, path: cmPath(listNS) + selectorQuery},
		selectedItems(b), 0)
}

// prepareListTable: the first page kubectl get asks for (Table, limit 500).
// The age column changes length over time, hence the 2% tolerance.
func prepareListTable(ctx context.Context, b *bench) (*prepared, error) {
	c := call{method: http.MethodGet, path: cmPath(listNS) + "?limit=500", accept: tableAccept}
	return listPrepared(ctx, b, b.leaderNow, c, listCheck{kind: "Table", items: min(500, listed(b.opts.objects))}, 0.02)
}

// prepareFollowerList: list_all on a follower, a consistent read (no
// resourceVersion): the follower waits for the leader's read index.
func prepareFollowerList(ctx context.Context, b *bench) (*prepared, error) {
	return listPrepared(ctx, b, b.followerNow, call{method: http.MethodGet, path: cmPath(listNS)}, allItems(b), 0)
}

func prepareStatic(ctx context.Context, b *bench) (*prepared, error) {
	return listPrepared(ctx, b, b.staticEP, call{method: http.MethodGet, path: cmPath(listNS)}, allItems(b), 0)
}

func prepareStaticSelector(ctx context.Context, b *bench) (*prepared, error) {
	return listPrepared(ctx, b, b.staticEP, call{method: http.MethodGet, path: cmPath(listNS) + selectorQuery},
		selectedItems(b), 0)
}

// pageLimit is list_paged's page size.
const pageLimit = 100

// walk lists listNS in pages of pageLimit following continue tokens and
// returns the number of pages; with verify it decodes every page and
// checks that the walk saw every object once.
func walk(ctx context.Context, ep *endpoint, buf *bytes.Buffer, objects int, verify bool) (int, error) {
	pages, items, cont := 0, 0, ""
	seen := map[string]bool{}
	for {
		path := cmPath(listNS) + fmt.Sprintf("?limit=%d", pageLimit)
		if cont != "" {
			path += "&continue=" + url.QueryEscape(cont)
		}
		if err := ep.do(ctx, call{method: http.MethodGet, path: path}, buf); err != nil {
			return pages, err
		}
		pages++
		if verify {
			l, _, err := verifyList(buf.Bytes(), listCheck{kind: "ConfigMapList", items: -1})
			if err != nil {
				return pages, fmt.Errorf("page %d: %w", pages, err)
			}
			for _, it := range l.Items {
				name := gjson.GetBytes(it, "metadata.name").String()
				if seen[name] {
					return pages, fmt.Errorf("page %d: %s listed twice", pages, name)
				}
				seen[name] = true
			}
			items += len(l.Items)
			cont = l.Metadata.Continue
		} else {
			b := bytes.TrimRight(buf.Bytes(), " \r\n")
			if len(b) == 0 || b[len(b)-1] != '}' {
				return pages, fmt.Errorf("page %d: %d-byte body does not end in '}'", pages, buf.Len())
			}
			cont = gjson.GetBytes(buf.Bytes(), "metadata.continue").String()
		}
		if cont == "" {
			break
		}
	}
	if verify && items != objects {
		return pages, fmt.Errorf("the walk listed %d ConfigMaps in %d pages, want %d", items, pages, objects)
	}
	return pages, nil
}

// prepareListPaged: one op is the whole walk of limit=100 pages.
func prepareListPaged(ctx context.Context, b *bench) (*prepared, error) {
	var buf bytes.Buffer
	pages, err := walk(ctx, b.leader, &buf, listed(b.opts.objects), true)
	if err != nil {
		return nil, err
	}
	return loop(func(string) ([]op, error) {
		ops := make([]op, b.opts.clients)
		for i := range ops {
			var buf bytes.Buffer
			ops[i] = func(ctx context.Context) error {
				n, err := walk(ctx, b.leader, &buf, listed(b.opts.objects), b.opts.verify == "all")
				if err == nil && n != pages {
					err = fmt.Errorf("the walk took %d pages, %d before the run", n, pages)
				}
				return err
			}
		}
		return ops, nil
	}), nil
}

// fetchListBodies returns the cluster's own list_all and list_selector
// responses (for the static server) and the size of the stored items.
func fetchListBodies(ctx context.Context, b *bench) (list, sel []byte, stored int64, err error) {
	var buf bytes.Buffer
	if err := b.leader.do(ctx, call{method: http.MethodGet, path: cmPath(listNS)}, &buf); err != nil {
		return nil, nil, 0, err
	}
	if _, stored, err = verifyList(buf.Bytes(), allItems(b)); err != nil {
		return nil, nil, 0, fmt.Errorf("list_all: %w", err)
	}
	list = bytes.Clone(buf.Bytes())
	if err := b.leader.do(ctx, call{method: http.MethodGet, path: cmPath(listNS) + selectorQuery}, &buf); err != nil {
		return nil, nil, 0, err
	}
	if _, _, err := verifyList(buf.Bytes(), selectedItems(b)); err != nil {
		return nil, nil, 0, fmt.Errorf("list_selector: %w", err)
	}
	return list, bytes.Clone(buf.Bytes()), stored, nil
}
