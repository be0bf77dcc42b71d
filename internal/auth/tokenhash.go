package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
)

// HashToken is what members keep of a secret token (the admin token, join
// tokens): "sha256:<hex>". Tokens are random and long, so a plain digest
// is enough; a copied hash does not authenticate.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TokenMatches reports in constant time whether token hashes to hash; an
// empty token or hash matches nothing.
func TokenMatches(token, hash string) bool {
	hexSum, ok := strings.CutPrefix(hash, "sha256:")
	var want [sha256.Size]byte
	if !ok || token == "" || len(hexSum) != 2*sha256.Size {
		return false
	}
	if _, err := hex.Decode(want[:], []byte(hexSum)); err != nil {
		return false
	}
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}
