package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// adminClient calls members' admin endpoints with the admin credentials.
// The same credentials reach every member: they share the cluster CA and
// the admin token.
type adminClient struct {
	hc *http.Client
	// base is the API URL of the member the settings name.
	base string
}

// Timeouts: a read of one member, and how long a change is retried while
// the cluster has no leader (an election, a transfer in progress).
const (
	readTimeout = 10 * time.Second
	changeRetry = 15 * time.Second
)

func newAdminClient(kubeconfig, server, token, caFile string) (*adminClient, error) {
	cfg, err := restConfig(kubeconfig, server, token, caFile)
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &adminClient{hc: hc, base: strings.TrimSuffix(cfg.Host, "/")}, nil
}

// restConfig reads the kubeconfig and applies the overrides; with
// --server and --token, a kubeconfig that does not exist is not needed.
// Unlike kubectl it never falls back to in-cluster credentials.
func restConfig(kubeconfig, server, token, caFile string) (*rest.Config, error) {
	if _, err := os.Stat(kubeconfig); errors.Is(err, os.ErrNotExist) && server != "" && token != "" {
		return &rest.Config{Host: server, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}}, nil
	}
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w (give --kubeconfig, or --server and --token)", err)
	}
	ov := &clientcmd.ConfigOverrides{}
	ov.ClusterInfo.Server, ov.ClusterInfo.CertificateAuthority, ov.AuthInfo.Token = server, caFile, token
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, "", ov, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
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

// get reads path from the member at baseURL into out (JSON, or the raw
// body for a *[]byte).
func (c *adminClient) get(ctx context.Context, baseURL, path string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	return c.call(ctx, http.MethodGet, baseURL, path, nil, out)
}

// change sends a membership change to the member the settings name,
// retrying while the cluster has no leader (503) or the relay to the
// leader failed (502): every change is idempotent.
func (c *adminClient) change(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, changeRetry+readTimeout)
	defer cancel()
	deadline := time.Now().Add(changeRetry)
	for {
		err := c.call(ctx, method, c.base, path, in, out)
		var se *statusError
		if !errors.As(err, &se) || (se.code != http.StatusServiceUnavailable && se.code != http.StatusBadGateway) ||
			time.Now().After(deadline) {
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
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, u, err)
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
