package discovery

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// document is an answer encoded once in both forms kube-apiserver writes.
type document struct {
	compact []byte // json.Encoder output: ends with exactly one "\n"
	pretty  []byte // indented by two spaces, no trailing newline
}

// bytes returns the form to send.
func (d document) bytes(pretty bool) []byte {
	if pretty {
		return d.pretty
	}
	return d.compact
}

// encode encodes v like kube-apiserver's JSON serializer: compact through a
// json.Encoder, pretty as json.MarshalIndent(v, "", "  ").
func encode(v any) (document, error) {
	var compact bytes.Buffer
	if err := json.NewEncoder(&compact).Encode(v); err != nil {
		return document{}, fmt.Errorf("discovery: encode %T: %w", v, err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, bytes.TrimSuffix(compact.Bytes(), []byte("\n")), "", "  "); err != nil {
		return document{}, fmt.Errorf("discovery: indent %T: %w", v, err)
	}
	return document{compact: compact.Bytes(), pretty: pretty.Bytes()}, nil
}

// aggregatedDocument is an aggregated discovery answer and its Etag.
type aggregatedDocument struct {
	document
	etag string // quoted, as sent in Etag and compared with If-None-Match
}

// encodeAggregated encodes list and computes its Etag the way kube-apiserver
// does: the upper-case hex SHA-512 of the list marshalled without kind and
// apiVersion, quoted.
func encodeAggregated(list apidiscoveryv2.APIGroupDiscoveryList) (aggregatedDocument, error) {
	list.TypeMeta = metav1.TypeMeta{}
	raw, err := json.Marshal(list)
	if err != nil {
		return aggregatedDocument{}, fmt.Errorf("discovery: hash aggregated discovery: %w", err)
	}
	sum := sha512.Sum512(raw)
	list.TypeMeta = metav1.TypeMeta{
		Kind:       "APIGroupDiscoveryList",
		APIVersion: apidiscoveryv2.SchemeGroupVersion.String(),
	}
	doc, err := encode(list)
	if err != nil {
		return aggregatedDocument{}, err
	}
	etag := strconv.Quote(strings.ToUpper(hex.EncodeToString(sum[:])))
	return aggregatedDocument{document: doc, etag: etag}, nil
}

// statusDocument encodes a Status the way kube-apiserver writes one when
// content negotiation failed: always indented, no trailing newline.
func statusDocument(status metav1.Status) ([]byte, error) {
	b, err := json.MarshalIndent(status, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("discovery: encode status: %w", err)
	}
	return b, nil
}
