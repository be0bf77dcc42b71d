package api

import (
	"context"

	"github.com/tidwall/gjson"

	"github.com/litek8s/litek8s/internal/api/registry"
	"github.com/litek8s/litek8s/internal/kv"
)

// Conversion of custom resources whose CRD has a conversion webhook
// (internal/api/crdconversion): objects are stored in the storage
// version; a read in another served version converts what it serves
// (get: the object; list: a page, or the whole list without a limit, in
// one ConversionReview; watch: each event), and a write in another
// version converts the stored object to the request's version, computes
// the update there (defaults, admission, validation against that
// version's schema, as kube's per-version storage does), converts the
// result to the storage version to store it and answers it converted
// back. Rows without Convert (conversion None, the storage version) take
// none of these paths.

// convertObjects returns objs converted to res's version: copies whose
// Raw is converted (labels as the webhook returned them), or objs itself
// when res has no conversion.
func convertObjects(ctx context.Context, res *registry.Resource, objs []*kv.Object) ([]*kv.Object, error) {
	if res.Convert == nil || len(objs) == 0 {
		return objs, nil
	}
	raws := make([][]byte, len(objs))
	for i, o := range objs {
		raws[i] = o.Raw
	}
	conv, err := res.Convert(ctx, raws, res.Version)
	if err != nil {
		return nil, err
	}
	out := make([]*kv.Object, len(objs))
	for i, o := range objs {
		if len(conv[i]) > 0 && len(o.Raw) > 0 && &conv[i][0] == &o.Raw[0] { // already in res's version
			out[i] = o
			continue
		}
		out[i] = converted(o, conv[i])
	}
	return out, nil
}

// converted returns a copy of the stored object o with raw, its
// conversion, and what serving it needs derived from raw (the metadata
// span; the labels, which a conversion may change).
func converted(o *kv.Object, raw []byte) *kv.Object {
	c := *o
	c.Raw, c.BodyStart, c.Cells, c.MetaStart, c.MetaEnd, c.Labels = raw, 0, nil, 0, 0, kv.Labels{}
	meta := gjson.GetBytes(raw, "metadata")
	if meta.Index > 0 {
		c.MetaStart, c.MetaEnd = int32(meta.Index), int32(meta.Index+len(meta.Raw))
	}
	if ls := meta.Get("labels"); ls.IsObject() {
		var lb kv.LabelsBuilder
		ls.ForEach(func(k, v gjson.Result) bool {
			lb.Add(k.String(), v.String())
			return true
		})
		c.Labels = lb.Labels()
	}
	return &c
}

// convertObject is convertObjects of one object.
func convertObject(ctx context.Context, res *registry.Resource, obj *kv.Object) (*kv.Object, error) {
	if res.Convert == nil {
		return obj, nil
	}
	out, err := convertObjects(ctx, res, []*kv.Object{obj})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// toStorage converts an object of res's version, about to be stored, to
// the storage version (raw itself without conversion).
func toStorage(ctx context.Context, res *registry.Resource, raw []byte) ([]byte, error) {
	if res.Convert == nil {
		return raw, nil
	}
	out, err := res.Convert(ctx, [][]byte{raw}, res.StorageVersion)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// toServed converts a stored object to res's version (raw itself without
// conversion).
func toServed(ctx context.Context, res *registry.Resource, raw []byte) ([]byte, error) {
	if res.Convert == nil {
		return raw, nil
	}
	out, err := res.Convert(ctx, [][]byte{raw}, res.Version)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// convertedList walks the objects of a list converted to its row's
// version, chunk objects per ConversionReview (all of them when chunk
// is 0), converting each chunk when the walk reaches it.
type convertedList struct {
	ctx   context.Context
	res   *registry.Resource
	objs  []*kv.Object // the listed objects, in order
	done  int          // objs[:done] are converted
	chunk int
	// err is the conversion that failed and ended the walk.
	err error
}

// newConvertedList collects the objects of l after after and converts
// the first chunk (so that a failure is known before a streamed answer
// starts).
func newConvertedList(ctx context.Context, res *registry.Resource, l *kv.List, after string, chunk int) (*convertedList, error) {
	c := &convertedList{ctx: ctx, res: res, chunk: chunk}
	l.Range(after, func(o *kv.Object) bool {
		c.objs = append(c.objs, o)
		return true
	})
	return c, c.convert(0)
}

// convert converts the chunk that starts at i.
func (c *convertedList) convert(i int) error {
	end := len(c.objs)
	if c.chunk > 0 {
		end = min(end, i+c.chunk)
	}
	conv, err := convertObjects(c.ctx, c.res, c.objs[i:end])
	if err != nil {
		return err
	}
	copy(c.objs[i:end], conv)
	c.done = end
	return nil
}

// Range calls fn with each converted object until it returns false or a
// conversion fails (c.err).
func (c *convertedList) Range(fn func(*kv.Object) bool) {
	for i := 0; i < len(c.objs); i++ {
		if i == c.done {
			if c.err = c.convert(i); c.err != nil {
				return
			}
		}
		if !fn(c.objs[i]) {
			return
		}
	}
}

// roundTrip is what a dry run of a converted version answers: the object
// converted to the storage version and back, as kube's dry-run storage
// encodes and decodes it (raw itself without conversion).
func roundTrip(ctx context.Context, res *registry.Resource, raw []byte) ([]byte, error) {
	st, err := toStorage(ctx, res, raw)
	if err != nil {
		return nil, err
	}
	return toServed(ctx, res, st)
}

// checkConvertible converts the stored object of a DELETE in a converted
// version before it is deleted, as kube reads it in that version first:
// with the webhook failing, the DELETE fails and deletes nothing.
func checkConvertible(ctx context.Context, s *Server, q *request) error {
	if q.res.Convert == nil {
		return nil
	}
	cur, _, err := s.store.Get(ctx, q.key(), false)
	if err != nil {
		return nil // deleteObject answers it
	}
	_, err = convertObject(ctx, q.res, cur)
	return err
}
