package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/litek8s/litek8s/internal/member/adminapi"
)

// adminClient calls members' admin endpoints with the admin credentials.
// The same credentials reach every member: they share the cluster CA and
// the admin token.
type adminClient struct {
	hc *http.Client
	// endpoints are the API URLs ask tries in turn: the ones the settings
	// name, then (only when those came from a kubeconfig) the members
	// remembered from an earlier answer of the same cluster.
	endpoints []string
	// base is the API URL of the member that answered the last ask (the
	// first endpoint before any did).
	base string
	// deadline bounds every call of the command (--timeout); zero for the
	// commands that run until done.
	deadline time.Time
	timeout  time.Duration
	// cache is the file that remembers the members' API URLs, "" for none.
	cache string
}

// Defaults of --timeout and --dial-timeout.
const (
	defaultTimeout     = 5 * time.Second
	defaultDialTimeout = 2 * time.Second
)

// settings are what the flags and the environment say about the cluster.
type settings struct {
	kubeconfig, context, server, token, caFile string
	endpoints                                  []string
	timeout, dialTimeout                       time.Duration
	cacheDir                                   string
	// long: the command runs until done (--timeout bounds only the
	// connections).
	long bool
}

// newAdminClient resolves the settings into a client (a usage error when
// they name nothing usable).
func newAdminClient(s settings) (*adminClient, error) {
	cfg, fromKubeconfig, err := restConfig(s)
	if err != nil {
		return nil, usageError(err)
	}
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, usageError(err)
	}
	// Our own transport: the dial and TLS handshake of each member attempt
	// are bounded by --dial-timeout (a dead or paused member is skipped
	// quickly), and no connection outlives the command.
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: s.dialTimeout}).DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: s.dialTimeout,
		DisableKeepAlives:   true,
	}
	rt, err := rest.HTTPWrappersForConfig(cfg, tr)
	if err != nil {
		return nil, usageError(err)
	}
	c := &adminClient{hc: &http.Client{Transport: rt}, timeout: s.timeout}
	if !s.long && s.timeout > 0 {
		c.deadline = time.Now().Add(s.timeout)
	}
	c.endpoints = s.endpoints
	if len(c.endpoints) == 0 {
		c.endpoints = []string{cfg.Host}
	}
	for i, e := range c.endpoints {
		c.endpoints[i] = strings.TrimSuffix(e, "/")
	}
	c.base = c.endpoints[0]
	if s.cacheDir != "" {
		if key := clusterKey(cfg); key != "" {
			c.cache = filepath.Join(s.cacheDir, "members-"+key+".json")
			if fromKubeconfig {
				for _, u := range c.remembered() {
					if !slices.Contains(c.endpoints, u) {
						c.endpoints = append(c.endpoints, u)
					}
				}
			}
		}
	}
	return c, nil
}

// restConfig reads the kubeconfig and applies the overrides. Which
// kubeconfig: --kubeconfig (LITEK8S_KUBECONFIG); else $KUBECONFIG, a
// list merged as kubectl merges it; else data/kubeconfig when it exists
// (the one a member writes in its working directory); else
// ~/.kube/config. With --endpoints (or --server) and --token no kubeconfig
// is needed. fromKubeconfig reports whether the member to ask came from
// the kubeconfig rather than from the flags. Unlike kubectl it never falls
// back to in-cluster credentials.
func restConfig(s settings) (_ *rest.Config, fromKubeconfig bool, _ error) {
	if s.server != "" && len(s.endpoints) == 0 {
		s.endpoints = []string{s.server}
	}
	rules, where := kubeconfigRules(s.kubeconfig)
	if _, err := os.Stat(s.kubeconfig); s.kubeconfig != "" && errors.Is(err, os.ErrNotExist) &&
		len(s.endpoints) > 0 && s.token != "" {
		rules = &clientcmd.ClientConfigLoadingRules{} // not needed
	}
	raw, err := rules.Load()
	if err != nil {
		return nil, false, fmt.Errorf("kubeconfig: %w (give --kubeconfig, or --endpoints and --token)", err)
	}
	if len(raw.Clusters) == 0 && len(s.endpoints) > 0 && s.token != "" {
		return &rest.Config{Host: s.endpoints[0], BearerToken: s.token,
			TLSClientConfig: rest.TLSClientConfig{CAFile: s.caFile}}, false, nil
	}
	if len(raw.Clusters) == 0 {
		return nil, false, fmt.Errorf("kubeconfig: none found (%s); give --kubeconfig, or --endpoints and --token", where)
	}
	ov := &clientcmd.ConfigOverrides{CurrentContext: s.context}
	if len(s.endpoints) > 0 {
		ov.ClusterInfo.Server = s.endpoints[0]
	}
	ov.ClusterInfo.CertificateAuthority, ov.AuthInfo.Token = s.caFile, s.token
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, s.context, ov, rules).ClientConfig()
	if err != nil {
		return nil, false, fmt.Errorf("kubeconfig %s: %w", where, err)
	}
	return cfg, len(s.endpoints) == 0, nil
}

// kubeconfigRules are the files restConfig reads and how to name them in
// an error.
func kubeconfigRules(explicit string) (*clientcmd.ClientConfigLoadingRules, string) {
	if explicit != "" {
		return &clientcmd.ClientConfigLoadingRules{ExplicitPath: explicit}, explicit
	}
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		return &clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(env)}, "KUBECONFIG=" + env
	}
	if _, err := os.Stat(memberKubeconfig); err == nil {
		return &clientcmd.ClientConfigLoadingRules{ExplicitPath: memberKubeconfig}, memberKubeconfig
	}
	return &clientcmd.ClientConfigLoadingRules{Precedence: []string{clientcmd.RecommendedHomeFile}},
		memberKubeconfig + " and " + clientcmd.RecommendedHomeFile
}

// memberKubeconfig is where a member started in the working directory
// writes its admin kubeconfig.
const memberKubeconfig = "data/kubeconfig"

// clusterKey names the cluster by its CA certificate (every member's
// kubeconfig carries the same one); "" when the CA is not known.
func clusterKey(cfg *rest.Config) string {
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		ca, _ = os.ReadFile(cfg.CAFile)
	}
	if len(ca) == 0 {
		return ""
	}
	sum := sha256.Sum256(bytes.TrimSpace(ca))
	return hex.EncodeToString(sum[:8])
}

// remembered is the members' API URLs of the cache file (none when there
// is no readable one).
func (c *adminClient) remembered() []string {
	b, err := os.ReadFile(c.cache)
	if err != nil {
		return nil
	}
	var urls []string
	if json.Unmarshal(b, &urls) != nil {
		return nil
	}
	return urls
}

// remember writes the configuration's API URLs to the cache file, so that
// the next command finds another member when the kubeconfig's is down
// (kubectl caches discovery the same way). A failure to write is not the
// command's: it is ignored.
func (c *adminClient) remember(l adminapi.MemberList) {
	if c.cache == "" {
		return
	}
	var urls []string
	for _, m := range l.Members {
		if m.APIURL != "" {
			urls = append(urls, strings.TrimSuffix(m.APIURL, "/"))
		}
	}
	slices.Sort(urls)
	b, err := json.Marshal(urls)
	if err != nil || len(urls) == 0 || os.MkdirAll(filepath.Dir(c.cache), 0o700) != nil {
		return
	}
	tmp := c.cache + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, c.cache)
	}
}

// statusError is an answer other than 2xx.
type statusError struct {
	url    string
	code   int
	status string
	msg    string
}

func (e *statusError) Error() string {
	if e.code == http.StatusUnauthorized {
		return fmt.Sprintf("%s: %s: the admin token was refused (check --token or the kubeconfig)", e.url, e.status)
	}
	return fmt.Sprintf("%s: %s: %s", e.url, e.status, e.msg)
}

// bound applies the command's deadline to ctx.
func (c *adminClient) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, c.deadline)
}

// get reads path from the member at baseURL into out (JSON, or the raw
// body for a *[]byte).
func (c *adminClient) get(ctx context.Context, baseURL, path string, out any) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	return c.call(ctx, http.MethodGet, baseURL, path, nil, out)
}

// ask sends the request to the endpoints in turn until one answers: a
// member that cannot be reached is skipped (nothing reached it, so nothing
// changed), any answer, a refusal included, is final. It fails with an
// unreachable error when none answers.
func (c *adminClient) ask(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	var errs []error
	for _, base := range c.endpoints {
		err := c.call(ctx, method, base, path, in, out)
		if !isUnreachable(err) {
			c.base = base
			return err
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return unreachableError(fmt.Errorf("no member answered: %w", errors.Join(errs...)))
}

// change sends a change to the endpoints (see ask), retrying while the
// cluster has no leader (503) or the relay to the leader failed (502),
// until the command's deadline: every change is idempotent. Reads of the
// leader's view (the configuration) retry the same way.
func (c *adminClient) change(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	for {
		err := c.ask(ctx, method, path, in, out)
		var se *statusError
		if !errors.As(err, &se) || (se.code != http.StatusServiceUnavailable && se.code != http.StatusBadGateway) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (c *adminClient) call(ctx context.Context, method, baseURL, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	u := strings.TrimSuffix(baseURL, "/") + path
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return usageError(err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.unreachable(ctx, method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return c.unreachable(ctx, method, u, err)
	}
	if resp.StatusCode/100 != 2 {
		return &statusError{url: method + " " + u, code: resp.StatusCode, status: resp.Status, msg: errorMessage(b)}
	}
	switch out := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*out = b
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, u, err)
	}
	return nil
}

// unreachable is the error of a request that got no answer: the member
// is down, cut off or did not answer within --timeout.
func (c *adminClient) unreachable(ctx context.Context, method, u string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return unreachableError(fmt.Errorf("%s %s: no answer within --timeout %s", method, u, c.timeout))
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		err = ue.Unwrap() // the *url.Error's cause: its URL is named already
	}
	return unreachableError(fmt.Errorf("%s %s: cannot reach the member: %w", method, u, err))
}

// errorMessage extracts the message of an admin error body, of a
// Kubernetes Status (the API's own refusals, such as a bad token) or of
// plain text.
func errorMessage(b []byte) string {
	var e struct{ Error, Message string }
	if json.Unmarshal(b, &e) == nil {
		if e.Error != "" {
			return e.Error
		}
		if e.Message != "" {
			return e.Message
		}
	}
	return strings.TrimSpace(string(b))
}
