package member_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/litek8s/litek8s/internal/member"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/member/membertest"
)

// Helpers of the conformance tests (conformance_test.go): the captures of a
// real kube-apiserver 1.37 in internal/api/testdata/golden/kube-1.37 (the
// package that serves them keeps them; same layout: every body X.<ext> has an X.meta with the
// request sent and the response head received), raw HTTP/1.1 exchanges that
// replay those requests against one litek8s member, and an order-keeping
// JSON tree that compares bodies field by field, key order included.

const goldenDir = "../api/testdata/golden/kube-1.37"

// goldenMeta is a capture's .meta: the request and the response head.
type goldenMeta struct {
	method, target string
	reqHeader      http.Header
	bodyFile       string // request body file, relative to goldenDir ("" = none)
	status         int
	respHeader     http.Header
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatalf("golden: %v", err)
	}
	return b
}

// readGoldenMeta parses the .meta of the capture file name.
func readGoldenMeta(t *testing.T, name string) *goldenMeta {
	t.Helper()
	m := &goldenMeta{reqHeader: http.Header{}, respHeader: http.Header{}}
	section, first := "", false
	sc := bufio.NewScanner(bytes.NewReader(readGolden(t, strings.TrimSuffix(name, filepath.Ext(name))+".meta")))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "# request" || line == "# response":
			section, first = line, true
			continue
		case line == "":
			continue
		case first && section == "# request":
			f := strings.Fields(line)
			m.method, m.target = f[0], f[1]
		case first && section == "# response":
			code, err := strconv.Atoi(strings.Fields(line)[1])
			if err != nil {
				t.Fatalf("golden %s: status line %q", name, line)
			}
			m.status = code
		default:
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				t.Fatalf("golden %s: header line %q", name, line)
			}
			if section == "# request" {
				m.reqHeader.Add(k, v)
			} else {
				m.respHeader.Add(k, v)
			}
		}
		first = false
	}
	if f := strings.Fields(m.reqHeader.Get("X-Body-File")); len(f) > 0 {
		m.bodyFile = f[0]
	}
	return m
}

// goldenClient talks raw HTTP/1.1 to one member, like the curl that made
// the captures.
type goldenClient struct {
	c     *membertest.Cluster
	base  string
	token string
	http  *http.Client
}

func newGoldenClient(t *testing.T, tweak func(*member.Config)) *goldenClient {
	t.Helper()
	c := membertest.StartCluster(t, 1, membertest.FastRaft, func(cfg *member.Config) {
		// The captures bind pods by hand to a node litek8s does not have
		// (the scheduler would mark them unschedulable first) and compare
		// a Deployment before and after patches (its controller would
		// write its status in between): API behaviour only.
		cfg.Controllers.Disabled = append(cfg.Controllers.Disabled, "default-scheduler", "deployment", "replicaset")
		if tweak != nil {
			tweak(cfg)
		}
	})
	sec, _, err := datadir.LoadSecrets(c.Config(0).DataDir)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := sec.CAPool()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableCompression: true,
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}} // HTTP/1.1 only
	t.Cleanup(tr.CloseIdleConnections)
	return &goldenClient{c: c, base: c.Member(0).URL(), token: c.Token(), http: &http.Client{Transport: tr}}
}

// exchange is one golden capture replayed against litek8s.
type exchange struct {
	golden string              // the capture's body file, relative to goldenDir
	target string              // request target instead of the capture's ("" keeps it)
	body   func([]byte) []byte // rewrites the request body (our uid, a stale resourceVersion)
}

// open sends the capture's request (method, target, User-Agent, Accept,
// Content-Type, Authorization, body) and returns the unread response.
func (g *goldenClient) open(ctx context.Context, t *testing.T, ex exchange) (*goldenMeta, *http.Response) {
	t.Helper()
	m := readGoldenMeta(t, ex.golden)
	target := m.target
	if ex.target != "" {
		target = ex.target
	}
	var body io.Reader
	if m.bodyFile != "" {
		b := readGolden(t, m.bodyFile)
		if ex.body != nil {
			b = ex.body(b)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, m.method, g.base+target, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"User-Agent", "Accept", "Content-Type", "Authorization"} {
		if v := m.reqHeader.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	if req.Header.Get("Authorization") == "Bearer <peer-admin-token>" {
		req.Header.Set("Authorization", "Bearer "+g.token)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", m.method, target, err)
	}
	return m, resp
}

// send replays the capture and reads the whole response.
func (g *goldenClient) send(t *testing.T, ex exchange) (*goldenMeta, *http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	m, resp := g.open(ctx, t, ex)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the body: %v", ex.golden, err)
	}
	return m, resp, b
}

// setup replays a capture whose answer is not under test (fixtures) and
// requires a 2xx.
func (g *goldenClient) setup(t *testing.T, ex exchange) []byte {
	t.Helper()
	_, resp, b := g.send(t, ex)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("setup %s: %s: %s", ex.golden, resp.Status, b)
	}
	return b
}

// check replays the capture and compares the answer with it: status, the
// head (see checkHead) and the body (see compareBodies). It returns our body.
func (g *goldenClient) check(t *testing.T, ex exchange, opt cmpOpts) []byte {
	t.Helper()
	m, resp, b := g.send(t, ex)
	checkHead(t, m, resp)
	// Go's net/http (kube's and ours) sends a Content-Length for bodies up to
	// 2048 bytes written at once.
	if m.respHeader.Get("Content-Length") != "" && len(b) <= 2048 && resp.ContentLength != int64(len(b)) {
		t.Errorf("Content-Length %d for a %d-byte body, want a Content-Length like kube's", resp.ContentLength, len(b))
	}
	want := readGolden(t, ex.golden)
	if strings.HasPrefix(m.respHeader.Get("Content-Type"), "text/plain") {
		if !bytes.Equal(b, want) {
			t.Errorf("body %q, want %q", b, want)
		}
		return b
	}
	compareBodies(t, want, b, opt)
	return b
}

// checkHead compares the status and the headers that matter: Content-Type,
// Cache-Control, X-Content-Type-Options, the Warning headers (all of them,
// in order) and the absence of WWW-Authenticate.
func checkHead(t *testing.T, m *goldenMeta, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != m.status {
		t.Errorf("status %d, want %d", resp.StatusCode, m.status)
	}
	for _, k := range []string{"Content-Type", "Cache-Control", "X-Content-Type-Options", "WWW-Authenticate"} {
		if got, want := resp.Header.Get(k), m.respHeader.Get(k); got != want {
			t.Errorf("header %s: %q, want %q", k, got, want)
		}
	}
	if got, want := resp.Header.Values("Warning"), m.respHeader.Values("Warning"); !slices.Equal(got, want) {
		t.Errorf("Warning headers %q, want %q", got, want)
	}
	if m.respHeader.Get("Transfer-Encoding") == "chunked" && m.respHeader.Get("Content-Length") == "" &&
		strings.Contains(m.target, "watch=") && !slices.Equal(resp.TransferEncoding, []string{"chunked"}) {
		t.Errorf("Transfer-Encoding %q, want chunked", resp.TransferEncoding)
	}
}

// cmpOpts makes a golden body and ours comparable beyond the default
// normalization (see normalizer).
type cmpOpts struct {
	// drop lists paths ("spec.containers.*.volumeMounts", "spec.tolerations.2")
	// removed from both bodies: known differences, each with its reason where
	// it is used.
	drop []string
	// golden edits the golden tree before comparing (keep only our rows).
	golden func(*jv)
	// both edits both trees before comparing (known differences a path
	// cannot name, such as a managedFields entry of a given manager).
	both func(*jv)
}

// compareBodies compares two JSON bodies: framing (compact with exactly one
// trailing newline, or indented with none, like the golden) and content, key
// order included, after normalization.
func compareBodies(t *testing.T, want, got []byte, opt cmpOpts) {
	t.Helper()
	wv, gv := mustParse(t, "golden", want), mustParse(t, "litek8s", got)
	switch {
	case bytes.Equal(want, append([]byte(wv.compact()), '\n')):
		if !bytes.Equal(got, append([]byte(gv.compact()), '\n')) {
			t.Errorf("body is not compact JSON ending with exactly one newline: %q", tail(got))
		}
	case bytes.Equal(want, []byte(wv.indent())):
		if !bytes.Equal(got, []byte(gv.indent())) {
			t.Errorf("body is not indented JSON without a trailing newline, like kube's: %q", tail(got))
		}
	default:
		t.Fatalf("golden body has an unexpected framing: %q", tail(want))
	}
	compareTrees(t, wv, gv, opt)
}

func compareTrees(t *testing.T, wv, gv *jv, opt cmpOpts) {
	t.Helper()
	if d := diffTrees(wv, gv, opt, newNormalizer(), newNormalizer()); d != "" {
		t.Errorf("body differs from kube's (normalized; first difference at line %s)", d)
	}
}

// diffTrees normalizes the golden tree wv with wn and ours with gn, in
// place, and describes their first difference ("" when they are equal).
func diffTrees(wv, gv *jv, opt cmpOpts, wn, gn *normalizer) string {
	if opt.golden != nil {
		opt.golden(wv)
	}
	if opt.both != nil {
		opt.both(wv)
		opt.both(gv)
	}
	wn.walk(wv, "")
	gn.walk(gv, "")
	for _, p := range opt.drop {
		wv.drop(strings.Split(p, "."))
		gv.drop(strings.Split(p, "."))
	}
	if wv.compact() == gv.compact() {
		return ""
	}
	return firstDiff(wv.indent(), gv.indent())
}

func mustParse(t *testing.T, what string, b []byte) *jv {
	t.Helper()
	v, err := parseJSON(b)
	if err != nil {
		t.Fatalf("%s body: %v: %q", what, err, tail(b))
	}
	return v
}

func tail(b []byte) []byte {
	if len(b) > 80 {
		return b[len(b)-80:]
	}
	return b
}

// firstDiff shows where two indented renderings part, with context.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	lo := max(0, i-4)
	ctx := func(l []string) string { return strings.Join(l[lo:min(len(l), i+4)], "\n") }
	return fmt.Sprintf("%d\n--- kube:\n%s\n--- litek8s:\n%s", i+1, ctx(wl), ctx(gl))
}

// readLines splits a watch stream into its lines, each of which must end
// with "\n".
func readLines(t *testing.T, b []byte) [][]byte {
	t.Helper()
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("watch stream does not end with a newline: %q", tail(b))
	}
	var lines [][]byte
	for l := range bytes.SplitAfterSeq(b, []byte("\n")) {
		if len(l) > 0 {
			lines = append(lines, l)
		}
	}
	return lines
}

// --- an order-keeping JSON tree ---

// jv is a JSON value that keeps key order and the exact literal text of
// scalars (string escapes included), unlike map[string]any.
type jv struct {
	kind byte     // '{' object, '[' array, 0 scalar
	lit  string   // a scalar's literal
	keys []string // an object's keys (decoded)
	vals []*jv    // an object's values, parallel to keys, or an array's elements
}

func parseJSON(b []byte) (*jv, error) {
	if !json.Valid(b) {
		return nil, fmt.Errorf("invalid JSON")
	}
	p := &jparser{b: b}
	return p.value(), nil
}

// jparser reads JSON that json.Valid accepted.
type jparser struct {
	b []byte
	i int
}

func (p *jparser) ws() {
	for p.i < len(p.b) && strings.IndexByte(" \t\r\n", p.b[p.i]) >= 0 {
		p.i++
	}
}

func (p *jparser) value() *jv {
	p.ws()
	switch p.b[p.i] {
	case '{':
		v := &jv{kind: '{'}
		p.i++
		for p.ws(); p.b[p.i] != '}'; p.ws() {
			var k string
			json.Unmarshal([]byte(p.literal()), &k)
			p.ws()
			p.i++ // ':'
			v.keys, v.vals = append(v.keys, k), append(v.vals, p.value())
			if p.ws(); p.b[p.i] == ',' {
				p.i++
			}
		}
		p.i++
		return v
	case '[':
		v := &jv{kind: '['}
		p.i++
		for p.ws(); p.b[p.i] != ']'; p.ws() {
			v.vals = append(v.vals, p.value())
			if p.ws(); p.b[p.i] == ',' {
				p.i++
			}
		}
		p.i++
		return v
	}
	return &jv{lit: p.literal()}
}

// literal reads a string, number, true, false or null as written.
func (p *jparser) literal() string {
	start := p.i
	if p.b[p.i] == '"' {
		for p.i++; p.b[p.i] != '"'; p.i++ {
			if p.b[p.i] == '\\' {
				p.i++
			}
		}
		p.i++
		return string(p.b[start:p.i])
	}
	for p.i < len(p.b) && strings.IndexByte(",]} \t\r\n", p.b[p.i]) < 0 {
		p.i++
	}
	return string(p.b[start:p.i])
}

func strValue(s string) *jv {
	b, _ := json.Marshal(s)
	return &jv{lit: string(b)}
}

func (v *jv) isString() bool { return v != nil && v.kind == 0 && strings.HasPrefix(v.lit, `"`) }

// str decodes a string value ("" for anything else).
func (v *jv) str() string {
	var s string
	if v.isString() {
		json.Unmarshal([]byte(v.lit), &s)
	}
	return s
}

func (v *jv) get(key string) *jv {
	if v == nil || v.kind != '{' {
		return nil
	}
	if i := slices.Index(v.keys, key); i >= 0 {
		return v.vals[i]
	}
	return nil
}

// at follows a path of keys.
func (v *jv) at(path ...string) *jv {
	for _, k := range path {
		v = v.get(k)
	}
	return v
}

func (v *jv) del(key string) {
	if v == nil || v.kind != '{' {
		return
	}
	if i := slices.Index(v.keys, key); i >= 0 {
		v.keys, v.vals = slices.Delete(v.keys, i, i+1), slices.Delete(v.vals, i, i+1)
	}
}

// drop removes path from v; "*" matches every element of an array, a
// number one element.
func (v *jv) drop(path []string) {
	if v == nil || len(path) == 0 {
		return
	}
	k, rest := path[0], path[1:]
	switch {
	case v.kind == '[' && k == "*":
		for _, e := range v.vals {
			e.drop(rest)
		}
	case v.kind == '[':
		i, err := strconv.Atoi(k)
		if err != nil || i >= len(v.vals) {
			return
		}
		if len(rest) == 0 {
			v.vals = slices.Delete(v.vals, i, i+1)
		} else {
			v.vals[i].drop(rest)
		}
	case len(rest) == 0:
		v.del(k)
	default:
		v.get(k).drop(rest)
	}
}

func (v *jv) compact() string {
	var b strings.Builder
	v.write(&b, "", "")
	return b.String()
}

// indent renders like json.MarshalIndent(v, "", "  ").
func (v *jv) indent() string {
	var b strings.Builder
	v.write(&b, "\n", "  ")
	return b.String()
}

func (v *jv) write(b *strings.Builder, nl, ind string) {
	if v.kind == 0 {
		b.WriteString(v.lit)
		return
	}
	open, end := "{", "}"
	if v.kind == '[' {
		open, end = "[", "]"
	}
	b.WriteString(open)
	if len(v.vals) == 0 {
		b.WriteString(end)
		return
	}
	inner := nl + ind
	for i, e := range v.vals {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(inner)
		if v.kind == '{' {
			k, _ := json.Marshal(v.keys[i])
			b.Write(k)
			b.WriteString(":")
			if nl != "" {
				b.WriteString(" ")
			}
		}
		e.write(b, inner, ind)
	}
	b.WriteString(nl)
	b.WriteString(end)
}

// --- normalization of values that differ on every run ---

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// apiAccessRE matches the name of a pod's token volume, whose 5-character
// suffix is random (kube's ServiceAccount admission).
var apiAccessRE = regexp.MustCompile(`^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$`)

// normalizer replaces what is not deterministic with placeholders, in
// place: uids (any UUID inside a string), resourceVersions,
// creationTimestamps, deletionTimestamps, managedFields times, clusterIPs,
// the suffix of kube-api-access volume names,
// the rv inside continue tokens, Table Age cells and the cluster CA of
// kube-root-ca.crt (data "ca.crt", a PEM certificate). managedFields are
// compared otherwise: litek8s writes them as kube does.
type normalizer struct {
	ageCol int // index of the Age column of the Table being walked (-1: none)
}

func newNormalizer() *normalizer { return &normalizer{ageCol: -1} }

func (n *normalizer) walk(v *jv, key string) {
	switch v.kind {
	case '{':
		if v.get("kind").str() == "Table" {
			n.tableAges(v)
		}
		for i, k := range v.keys {
			n.walk(v.vals[i], k)
		}
	case '[':
		for i, e := range v.vals {
			if key == "clusterIPs" && e.isString() {
				v.vals[i] = strValue("<clusterIP>")
				continue
			}
			n.walk(e, "")
		}
	default:
		if !v.isString() {
			return
		}
		switch key {
		case "resourceVersion":
			*v = *strValue("<resourceVersion>")
			return
		case "creationTimestamp":
			*v = *strValue("<creationTimestamp>")
			return
		case "deletionTimestamp":
			*v = *strValue("<deletionTimestamp>")
			return
		case "time": // of a managedFields entry
			*v = *strValue("<time>")
			return
		case "clusterIP":
			*v = *strValue("<clusterIP>")
			return
		case "ca.crt":
			if strings.HasPrefix(v.str(), "-----BEGIN CERTIFICATE-----") {
				*v = *strValue("<ca.crt>")
				return
			}
		case "continue":
			if s := v.str(); s != "" {
				*v = *strValue(normalizeContinue(s))
			}
			return
		}
		if s := v.str(); apiAccessRE.MatchString(s) {
			*v = *strValue(apiAccessRE.ReplaceAllString(s, "kube-api-access-<suffix>"))
			return
		}
		if s := v.str(); uuidRE.MatchString(s) {
			*v = *strValue(uuidRE.ReplaceAllString(s, "<uid>"))
		}
	}
}

// tableAges replaces the Age cells of a Table's rows. A Table watch sends
// the column definitions in its first event only: the index carries over.
func (n *normalizer) tableAges(table *jv) {
	if cols := table.get("columnDefinitions"); cols != nil && cols.kind == '[' {
		n.ageCol = -1
		for i, c := range cols.vals {
			if c.get("name").str() == "Age" {
				n.ageCol = i
			}
		}
	}
	rows := table.get("rows")
	if n.ageCol < 0 || rows == nil {
		return
	}
	for _, r := range rows.vals {
		if cells := r.get("cells"); cells != nil && n.ageCol < len(cells.vals) {
			cells.vals[n.ageCol] = strValue("<age>")
		}
	}
}

// normalizeContinue renders a continue token as its decoded JSON with the
// rv replaced, so that its format (base64url without padding, key order,
// start key) is compared but not the revision. litek8s's tokens carry two
// more fields, "offset" (the objects before the start key, which makes
// remainingItemCount free) and "at" (its age): tokens are opaque to clients,
// so they are dropped.
func normalizeContinue(s string) string {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "continue token that is not unpadded base64url: " + s
	}
	v, err := parseJSON(b)
	if err != nil {
		return "continue token that is not JSON: " + string(b)
	}
	if rv := v.get("rv"); rv != nil {
		rv.lit = "<rv>"
	}
	v.del("offset")
	v.del("at")
	return "<continue " + v.compact() + ">"
}

// keepRows returns a golden edit that keeps the Table rows of these names
// only (the golden cluster had controllers creating more objects).
func keepRows(names ...string) func(*jv) {
	return func(table *jv) {
		rows := table.get("rows")
		rows.vals = slices.DeleteFunc(rows.vals, func(r *jv) bool {
			return !slices.Contains(names, r.get("cells").vals[0].str())
		})
	}
}

// The comparison itself: parsing keeps every byte of the captures, and the
// differences that matter are caught while the normalized ones are not.
func TestGoldenCompare(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".req.json") { // request bodies, sent as written
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 { // a 304's empty body
			continue
		}
		v, err := parseJSON(b)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if s := v.compact() + "\n"; s != string(b) && v.indent() != string(b) {
			t.Errorf("%s does not round-trip", f)
		}
	}
	const base = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"ccbf0abb-dd04-4834-828b-5613702f3470",` +
		`"resourceVersion":"5","creationTimestamp":"2026-11-30T09:57:24Z","managedFields":[{"manager":"x","time":"2026-11-30T09:57:24Z"}]},"data":{"k":"\u003c"}}`
	for _, c := range []struct {
		name, other string
		same        bool
	}{
		{"run-specific values", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"07355f14-32ff-4bb7-992f-bfb049f1d35d",` +
			`"resourceVersion":"77","creationTimestamp":"2027-01-01T00:00:00Z","managedFields":[{"manager":"x","time":"2027-01-01T00:00:00Z"}]},"data":{"k":"\u003c"}}`, true},
		{"a manager", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"07355f14-32ff-4bb7-992f-bfb049f1d35d",` +
			`"resourceVersion":"77","creationTimestamp":"2027-01-01T00:00:00Z","managedFields":[{"manager":"y","time":"2027-01-01T00:00:00Z"}]},"data":{"k":"\u003c"}}`, false},
		{"key order", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"\u003c"}}`, false},
		{"string escapes", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"<"}}`, false},
		{"a value", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b"},"data":{"k":"\u003c"}}`, false},
		{"a missing key", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}`, false},
		{"null vs absent", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"\u003c"},"binaryData":null}`, false},
	} {
		w, _ := parseJSON([]byte(base))
		g, err := parseJSON([]byte(c.other))
		if err != nil {
			t.Fatal(err)
		}
		if c.name != "run-specific values" && c.name != "a manager" { // base without the normalized fields
			w.get("metadata").keys, w.get("metadata").vals = w.get("metadata").keys[:1], w.get("metadata").vals[:1]
		}
		if d := diffTrees(w, g, cmpOpts{}, newNormalizer(), newNormalizer()); (d == "") != c.same {
			t.Errorf("%s: same=%v, diff %q", c.name, d == "", d)
		}
	}
}
