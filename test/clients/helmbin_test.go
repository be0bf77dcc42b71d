package clients

import (
	"testing"

	"github.com/litek8s/litek8s/test/helmbin"
)

// helmBinary is the Helm CLI test/chart uses too.
func helmBinary(t *testing.T) string { return helmbin.Binary(t) }
