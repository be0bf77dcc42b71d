// Package encryption implements kube-apiserver's --encryption-provider-config
// for litek8s: it parses an EncryptionConfiguration
// (apiserver.config.k8s.io/v1) strictly, with kube's validation rules, and
// builds a Transformer that turns the stored bytes of the resources the
// configuration lists into kube's `k8s:enc:<provider>:v1:<key>:` ciphertext
// and back. Providers: aesgcm, aescbc, secretbox and identity (kms is
// refused as not supported). The first provider (its first key) encrypts;
// every provider and key decrypts the data carrying its prefix, and data read
// with any other than the first is reported stale, so that a rewrite moves
// it to the first key (kube's key rotation).
//
// The store (internal/raftstore) calls the Transformer: objects enter the
// Raft log, snapshots and backups encrypted, and are decrypted when applied,
// so memory holds plaintext as kube's watch cache does.
//
// Concurrency: a Transformer is immutable once built and safe for
// concurrent use.
package encryption
