package monitoring

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// seriesNames returns the metric names a PromQL expression selects, in
// order of first appearance. It is a tokenizer, not a parser (the
// Prometheus module's parser would drag its dependencies into go.mod):
// string literals, comments, label matchers ({...}), ranges and subqueries
// ([...]) and Grafana variables ($var, ${var}) are skipped; an identifier
// followed by "(" is a function or an aggregation; by, without, on,
// ignoring, group_left and group_right skip the label list that follows;
// keywords, aggregation operators, numbers and durations are not names.
// Whatever identifier is left is a metric name. That promtool accepts
// every expression is checked apart (TestDashboardQueriesParse, promtool
// check rules).
func seriesNames(expr string) ([]string, error) {
	var names []string
	s := expr
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j, err := skipString(s, i)
			if err != nil {
				return nil, err
			}
			i = j
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '{' || c == '[':
			j, err := skipGroup(s, i)
			if err != nil {
				return nil, err
			}
			i = j
		case c == '}' || c == ']':
			return nil, fmt.Errorf("unbalanced %q at %d in %q", c, i, expr)
		case c == '$':
			i = skipVariable(s, i)
		case isDigit(c) || (c == '.' && i+1 < len(s) && isDigit(s[i+1])):
			i = skipNumber(s, i)
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			word := s[i:j]
			k := j
			for k < len(s) && isSpace(s[k]) {
				k++
			}
			call := k < len(s) && s[k] == '('
			lower := strings.ToLower(word)
			switch {
			case groupingKeywords[lower] && call:
				end, err := skipGroup(s, k)
				if err != nil {
					return nil, err
				}
				j = end
			case keywords[lower] || groupingKeywords[lower] || call:
			default:
				if !slices.Contains(names, word) {
					names = append(names, word)
				}
			}
			i = j
		default:
			i++
		}
	}
	if err := checkParens(expr); err != nil {
		return nil, err
	}
	return names, nil
}

// groupingKeywords take a parenthesised label list.
var groupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// keywords are PromQL's binary operators, modifiers, literals and
// aggregation operators (which may be followed by "by (...)" before their
// parenthesis).
var keywords = map[string]bool{
	"and": true, "or": true, "unless": true, "atan2": true, "bool": true, "offset": true,
	"inf": true, "nan": true,
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isSpace(c byte) bool      { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isIdentStart(c byte) bool { return c == '_' || c == ':' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// skipString returns the index after the string literal that starts at i.
func skipString(s string, i int) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`':
			j++
		case s[j] == q:
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string at %d in %q", i, s)
}

// skipGroup returns the index after the bracket that closes the one at i
// ("(", "{" or "["), skipping nested brackets and strings.
func skipGroup(s string, i int) (int, error) {
	var stack []byte
	for j := i; j < len(s); j++ {
		switch c := s[j]; c {
		case '"', '\'', '`':
			end, err := skipString(s, j)
			if err != nil {
				return 0, err
			}
			j = end - 1
		case '(', '{', '[':
			stack = append(stack, map[byte]byte{'(': ')', '{': '}', '[': ']'}[c])
		case ')', '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return 0, fmt.Errorf("unbalanced %q at %d in %q", c, j, s)
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, fmt.Errorf("unclosed %q at %d in %q", s[i], i, s)
}

// checkParens reports unbalanced parentheses outside strings.
func checkParens(s string) error {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'', '`':
			end, err := skipString(s, i)
			if err != nil {
				return err
			}
			i = end - 1
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return fmt.Errorf("unbalanced ')' at %d in %q", i, s)
			}
		}
	}
	if depth != 0 {
		return fmt.Errorf("unclosed '(' in %q", s)
	}
	return nil
}

// skipVariable returns the index after the Grafana variable at i: $name or
// ${name...}.
func skipVariable(s string, i int) int {
	j := i + 1
	if j < len(s) && s[j] == '{' {
		if end := strings.IndexByte(s[j:], '}'); end >= 0 {
			return j + end + 1
		}
		return len(s)
	}
	for j < len(s) && isIdentChar(s[j]) {
		j++
	}
	return j
}

// skipNumber returns the index after the number or duration at i (1, 0.5,
// 1e-3, 0x1f, 5m, 1h30m).
func skipNumber(s string, i int) int {
	j := i
	for j < len(s) {
		c := s[j]
		switch {
		case isIdentChar(c) || c == '.':
			j++
		case (c == '+' || c == '-') && (s[j-1] == 'e' || s[j-1] == 'E') && !strings.HasPrefix(s[i:], "0x"):
			j++
		default:
			return j
		}
	}
	return j
}

func TestSeriesNames(t *testing.T) {
	tests := []struct {
		name, expr string
		want       []string
	}{
		{"selector", `litek8s_raft_term`, []string{"litek8s_raft_term"}},
		{"matchers with braces in strings", `a{x="}", y=~"{[("}`, []string{"a"}},
		{"histogram quantile", `histogram_quantile(0.99, sum by (le, verb) (rate(apiserver_request_duration_seconds_bucket{verb!~"WATCH|CONNECT"}[5m])))`,
			[]string{"apiserver_request_duration_seconds_bucket"}},
		{"aggregation with trailing by", `sum(rate(b_total[1m])) by (code) / ignoring (code) group_left sum(rate(b_total[1m]))`,
			[]string{"b_total"}},
		{"or and comparison", "max by (job) (c) == 0\nor\nmax by (job) (d{state=\"Leader\"}) == 0", []string{"c", "d"}},
		{"offset, on, group_left with labels", `e offset 5m and on (instance) group_left (member) f`, []string{"e", "f"}},
		{"numbers", `1e-3 * g + 0x1F - Inf + 1.5E+3 + NaN + .5`, []string{"g"}},
		{"label_replace strings", `label_replace(h, "dst", "$1", "src", "(.*)")`, []string{"h"}},
		{"recording rule name, bool", `rec:rule:name > bool 1`, []string{"rec:rule:name"}},
		{"at modifier", `x @ start()`, []string{"x"}},
		{"topk", `topk(10, sum by (resource, verb) (rate(y[1m])))`, []string{"y"}},
		{"comment", "# comment foo\nz", []string{"z"}},
		{"grafana variables", `rate(w{job=~"$job", instance=~"${member:regex}"}[$__rate_interval]) * $factor`, []string{"w"}},
		{"count_values", `count_values("version", v)`, []string{"v"}},
		{"subquery", `max_over_time(rate(s[1m])[10m:1m])`, []string{"s"}},
		{"no series", `vector(1)`, nil},
		{"keywords are not names", `sum without (instance) (a) unless on () b`, []string{"a", "b"}},
		{"deduplicated", `increase(k_sum[1h]) / increase(k_count[1h]) + k_sum`, []string{"k_sum", "k_count"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := seriesNames(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("seriesNames(%q) = %q, want %q", tt.expr, got, tt.want)
			}
		})
	}
	for _, bad := range []string{`sum(a{b="c"`, `a}`, `rate(a[5m]`, `a{b="c}`, `sum(a))`} {
		if got, err := seriesNames(bad); err == nil {
			t.Errorf("seriesNames(%q) = %q, want an error", bad, got)
		}
	}
}
