package encryption

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// The configuration's kind and apiVersion, as kube-apiserver reads them.
const (
	Kind       = "EncryptionConfiguration"
	APIVersion = "apiserver.config.k8s.io/v1"
)

// Configuration is kube's apiserver.config.k8s.io/v1 EncryptionConfiguration,
// with kube's field names.
type Configuration struct {
	Kind       string                  `json:"kind"`
	APIVersion string                  `json:"apiVersion"`
	Resources  []ResourceConfiguration `json:"resources"`
}

// ResourceConfiguration lists resources ("secrets", "deployments.apps",
// "*.", "*.apps", "*.*") and the providers that store them, the first one
// encrypting.
type ResourceConfiguration struct {
	Resources []string                `json:"resources"`
	Providers []ProviderConfiguration `json:"providers"`
}

// ProviderConfiguration is exactly one provider.
type ProviderConfiguration struct {
	AESGCM    *KeysConfiguration `json:"aesgcm,omitempty"`
	AESCBC    *KeysConfiguration `json:"aescbc,omitempty"`
	Secretbox *KeysConfiguration `json:"secretbox,omitempty"`
	Identity  *struct{}          `json:"identity,omitempty"`
	// KMS is parsed so that it can be refused by name.
	KMS json.RawMessage `json:"kms,omitempty"`
}

// KeysConfiguration is the keys of an aesgcm, aescbc or secretbox provider;
// the first encrypts.
type KeysConfiguration struct {
	Keys []Key `json:"keys"`
}

// Key is a named base64 secret.
type Key struct {
	Name   string `json:"name"`
	Secret string `json:"secret"`
}

// LoadFile reads and parses the configuration at path and builds its
// Transformer.
func LoadFile(path string) (*Transformer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encryption: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("encryption: %s: %w", path, err)
	}
	t, err := New(c)
	if err != nil {
		return nil, fmt.Errorf("encryption: %s: %w", path, err)
	}
	return t, nil
}

// Parse decodes a configuration (YAML or JSON) strictly, unknown fields
// refused, and validates it.
func Parse(b []byte) (*Configuration, error) {
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	var c Configuration
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate applies kube's rules (k8s.io/apiserver's
// ValidateEncryptionConfiguration and its masking checks).
func (c *Configuration) Validate() error {
	if c.Kind != Kind || c.APIVersion != APIVersion {
		return fmt.Errorf("kind %q apiVersion %q: want kind %s, apiVersion %s", c.Kind, c.APIVersion, Kind, APIVersion)
	}
	if len(c.Resources) == 0 {
		return errors.New("resources: Required value: at least one resources is required")
	}
	seen := map[schema.GroupResource]bool{}
	var errs []error
	for i, rc := range c.Resources {
		r := fmt.Sprintf("resources[%d].resources", i)
		if len(rc.Resources) == 0 {
			errs = append(errs, fmt.Errorf("%s: Required value: at least one %s is required", r, r))
		}
		errs = append(errs, validateResources(rc.Resources, r)...)
		if len(rc.Providers) == 0 {
			errs = append(errs, fmt.Errorf("resources[%d].providers: Required value: at least one resources[%d].providers is required", i, i))
		}
		for j, p := range rc.Providers {
			if err := p.validate(); err != nil {
				errs = append(errs, fmt.Errorf("resources[%d].providers[%d]: %w", i, j, err))
			}
		}
		for _, res := range rc.Resources {
			gr := schema.ParseGroupResource(res)
			if seen[schema.GroupResource{Group: gr.Group, Resource: "*"}] || seen[anyGroupAnyResource] {
				errs = append(errs, fmt.Errorf("resource %q is masked by an earlier rule", res))
			}
		}
		for _, res := range rc.Resources {
			seen[schema.ParseGroupResource(res)] = true
		}
	}
	return errors.Join(errs...)
}

var anyGroupAnyResource = schema.GroupResource{Group: "*", Resource: "*"}

// validateResources checks the names of one resources list as kube does.
func validateResources(resources []string, path string) []error {
	var errs []error
	grs := make([]schema.GroupResource, len(resources))
	for j, res := range resources {
		grs[j] = schema.ParseGroupResource(res)
		gr := grs[j]
		bad := ""
		switch {
		case strings.ToLower(res) != res:
			bad = "resource name should not contain capital letters"
		case res == "*":
			bad = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
		case gr.Group == "events.k8s.io":
			bad = "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"
		case gr.Group == "extensions":
			bad = "'extensions' group has been removed and cannot be used for encryption"
		case gr.Group == "*" && gr.Resource != "*":
			bad = "encrypting the same resource across groups is not supported"
		}
		if bad != "" {
			errs = append(errs, fmt.Errorf("%s[%d]: Invalid value: %q: %s", path, j, res, bad))
		}
	}
	var dup, overlap bool
	for i, a := range grs {
		for j, b := range grs {
			switch {
			case i == j:
			case a == b:
				dup = true
			case a == anyGroupAnyResource || (a.Group == b.Group && (a.Resource == "*" || b.Resource == "*")):
				overlap = true
			}
		}
	}
	if dup {
		errs = append(errs, fmt.Errorf("%s: Invalid value: %q: the same resource cannot be specified multiple times", path, resources))
	}
	if overlap {
		errs = append(errs, fmt.Errorf("%s: Invalid value: %q: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked", path, resources))
	}
	return errs
}

// validate checks that p is exactly one provider with valid keys.
func (p *ProviderConfiguration) validate() error {
	n := 0
	for _, set := range []bool{p.AESGCM != nil, p.AESCBC != nil, p.Secretbox != nil, p.Identity != nil, p.KMS != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return errors.New("provider does not contain any of the expected providers: AESGCM, AESCBC, Secretbox, Identity")
	case n > 1:
		return errors.New("more than one provider specified in a single element, should split into different list elements")
	case p.KMS != nil:
		return errors.New("kms: the kms provider is not supported by litek8s (use aesgcm, aescbc or secretbox)")
	case p.AESGCM != nil:
		return validateKeys(p.AESGCM.Keys, "aesgcm", 16, 24, 32)
	case p.AESCBC != nil:
		return validateKeys(p.AESCBC.Keys, "aescbc", 16, 24, 32)
	case p.Secretbox != nil:
		return validateKeys(p.Secretbox.Keys, "secretbox", 32)
	}
	return nil
}

func validateKeys(keys []Key, provider string, sizes ...int) error {
	if len(keys) == 0 {
		return fmt.Errorf("%s.keys: Required value: at least one keys is required", provider)
	}
	names := map[string]bool{}
	for i, k := range keys {
		path := fmt.Sprintf("%s.keys[%d]", provider, i)
		if k.Name == "" {
			return fmt.Errorf("%s.name: Required value: name is a mandatory field for a key", path)
		}
		if strings.Contains(k.Name, ":") {
			return fmt.Errorf("%s.name: Invalid value: %q: must not contain ':'", path, k.Name)
		}
		if names[k.Name] {
			return fmt.Errorf("%s.name: Duplicate value: %q", path, k.Name)
		}
		names[k.Name] = true
		if k.Secret == "" {
			return fmt.Errorf("%s.secret: Required value: secret is a mandatory field for a key", path)
		}
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return fmt.Errorf("%s.secret: Invalid value: REDACTED: secrets must be base64 encoded", path)
		}
		ok := false
		for _, n := range sizes {
			ok = ok || len(secret) == n
		}
		if !ok {
			return fmt.Errorf("%s.secret: Invalid value: REDACTED: secret is not of the expected length, got %d, expected one of %v", path, len(secret), sizes)
		}
	}
	return nil
}
