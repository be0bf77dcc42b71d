package encryption

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"golang.org/x/crypto/nacl/secretbox"
)

// The prefixes of kube's providers; a key's data is
// <provider prefix><key name>:<ciphertext>.
const (
	encPrefix       = "k8s:enc:"
	aesGCMPrefix    = encPrefix + "aesgcm:v1:"
	aesCBCPrefix    = encPrefix + "aescbc:v1:"
	secretboxPrefix = encPrefix + "secretbox:v1:"
)

// cipherKey is one key of one provider, or identity (empty prefix).
type cipherKey struct {
	// prefix is the whole prefix of this key's data ("" for identity).
	prefix []byte
	// seal encrypts plain for the authenticated data ad, appending to dst
	// (which holds the prefix).
	seal func(dst, plain, ad []byte) ([]byte, error)
	// open decrypts data (after the prefix).
	open func(data, ad []byte) ([]byte, error)
}

// providerKeys returns the keys of p, in order.
func providerKeys(p ProviderConfiguration) ([]cipherKey, error) {
	switch {
	case p.AESGCM != nil:
		return keysOf(aesGCMPrefix, p.AESGCM.Keys, newGCM)
	case p.AESCBC != nil:
		return keysOf(aesCBCPrefix, p.AESCBC.Keys, newCBC)
	case p.Secretbox != nil:
		return keysOf(secretboxPrefix, p.Secretbox.Keys, newSecretbox)
	case p.Identity != nil:
		return []cipherKey{{seal: sealIdentity, open: openIdentity}}, nil
	}
	return nil, errors.New("provider not supported")
}

func keysOf(prefix string, keys []Key, build func(secret []byte) (cipherKey, error)) ([]cipherKey, error) {
	out := make([]cipherKey, 0, len(keys))
	for _, k := range keys {
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k.Name, err)
		}
		ck, err := build(secret)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k.Name, err)
		}
		ck.prefix = []byte(prefix + k.Name + ":")
		out = append(out, ck)
	}
	return out, nil
}

// newGCM is kube's aesgcm: a random 12-byte nonce, then the sealed data,
// authenticated with the object's storage path.
func newGCM(secret []byte) (cipherKey, error) {
	block, err := aes.NewCipher(secret)
	if err != nil {
		return cipherKey{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return cipherKey{}, err
	}
	ns := aead.NonceSize()
	return cipherKey{
		seal: func(dst, plain, ad []byte) ([]byte, error) {
			start := len(dst)
			dst = append(dst, make([]byte, ns)...)
			if _, err := rand.Read(dst[start:]); err != nil {
				return nil, err
			}
			return aead.Seal(dst, dst[start:], plain, ad), nil
		},
		open: func(data, ad []byte) ([]byte, error) {
			if len(data) < ns {
				return nil, errors.New("the stored data was shorter than the required size")
			}
			return aead.Open(nil, data[:ns], data[ns:], ad)
		},
	}, nil
}

// newCBC is kube's aescbc: a random IV, then the PKCS#7-padded data.
func newCBC(secret []byte) (cipherKey, error) {
	block, err := aes.NewCipher(secret)
	if err != nil {
		return cipherKey{}, err
	}
	const bs = aes.BlockSize
	return cipherKey{
		seal: func(dst, plain, _ []byte) ([]byte, error) {
			pad := bs - len(plain)%bs
			start := len(dst)
			dst = append(dst, make([]byte, bs)...)
			if _, err := rand.Read(dst[start:]); err != nil {
				return nil, err
			}
			dst = append(dst, plain...)
			dst = append(dst, bytes.Repeat([]byte{byte(pad)}, pad)...)
			cipher.NewCBCEncrypter(block, dst[start:start+bs]).CryptBlocks(dst[start+bs:], dst[start+bs:])
			return dst, nil
		},
		open: func(data, _ []byte) ([]byte, error) {
			if len(data) < bs {
				return nil, errors.New("the stored data was shorter than the required size")
			}
			iv, data := data[:bs], data[bs:]
			if len(data) == 0 || len(data)%bs != 0 {
				return nil, errors.New("the stored data is not a multiple of the block size")
			}
			out := make([]byte, len(data))
			cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, data)
			pad := int(out[len(out)-1])
			if pad == 0 || pad > bs || pad > len(out) {
				return nil, errors.New("invalid PKCS7 data (empty or not padded)")
			}
			for _, c := range out[len(out)-pad:] {
				if int(c) != pad {
					return nil, errors.New("invalid padding on input")
				}
			}
			return out[:len(out)-pad], nil
		},
	}, nil
}

// newSecretbox is kube's secretbox: a random 24-byte nonce, then the
// sealed data.
func newSecretbox(secret []byte) (cipherKey, error) {
	if len(secret) != 32 {
		return cipherKey{}, fmt.Errorf("expected key size 32 for secretbox provider, got %d", len(secret))
	}
	var key [32]byte
	copy(key[:], secret)
	const ns = 24
	return cipherKey{
		seal: func(dst, plain, _ []byte) ([]byte, error) {
			var nonce [ns]byte
			if _, err := rand.Read(nonce[:]); err != nil {
				return nil, err
			}
			return secretbox.Seal(append(dst, nonce[:]...), plain, &nonce, &key), nil
		},
		open: func(data, _ []byte) ([]byte, error) {
			if len(data) < ns+secretbox.Overhead {
				return nil, errors.New("the stored data was shorter than the required size")
			}
			var nonce [ns]byte
			copy(nonce[:], data[:ns])
			out, ok := secretbox.Open(nil, data[ns:], &nonce, &key)
			if !ok {
				return nil, errors.New("output array was not large enough for encryption")
			}
			return out, nil
		},
	}, nil
}

// sealIdentity stores plain as it is.
func sealIdentity(dst, plain, _ []byte) ([]byte, error) {
	if len(dst) == 0 {
		return plain, nil
	}
	return append(dst, plain...), nil
}

// openIdentity reads data as it is, unless it is encrypted (kube's
// encrypt-check identity).
func openIdentity(data, _ []byte) ([]byte, error) {
	if bytes.HasPrefix(data, []byte(encPrefix)) {
		return nil, errors.New("identity transformer tried to read encrypted data")
	}
	return data, nil
}
