// Package golden gives tests the real kube-apiserver 1.37 answers kept in
// internal/api/testdata/golden/kube-1.37 (see its README), wherever the
// test's package lives.
//
// Concurrency: no state; the functions read files.
package golden

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the directory of the captures.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "golden", "kube-1.37")
}

// Read returns the capture name (a path relative to Dir); the test fails
// at once when it cannot be read.
func Read(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		tb.Fatalf("golden: %v", err)
	}
	return b
}
