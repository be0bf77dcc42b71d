package certs

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Files of the member certificate in Config.Dir.
const (
	memberCertFile = "member.crt"
	memberKeyFile  = "member.key"
)

// loadPair reads a PEM certificate (chain) and key; ok is false when the
// certificate file does not exist.
func loadPair(certFile, keyFile string) (c *tls.Certificate, ok bool, err error) {
	cb, err := os.ReadFile(certFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	kb, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, false, err
	}
	c, err = parsePair(cb, kb)
	return c, err == nil, err
}

// parsePair parses a PEM pair, with its leaf.
func parsePair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%w certificate: %v", ErrInvalid, err)
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("%w certificate: %v", ErrInvalid, err)
		}
	}
	return &pair, nil
}

// savePair writes c under dir, owner-only; each file is replaced by a
// rename, so a crash leaves the old or the new file, and a mismatched
// pair is refused at the next load (and issued anew).
func savePair(dir string, c *tls.Certificate) error {
	kb, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return err
	}
	var cb []byte
	for _, der := range c.Certificate {
		cb = append(cb, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	if err := writeFile(filepath.Join(dir, memberKeyFile), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, memberCertFile), cb)
}

func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("certs: write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return nil
}
