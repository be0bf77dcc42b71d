package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// usageError is a command line `node` cannot run with (an unknown flag, a
// positional argument): main exits 2 for it, as for any usage mistake,
// and 1 for every other error.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// readConfigFile reads the config file into v, after checking that each of
// its keys is a flag's name: a misspelt key would otherwise be ignored
// without a word and the member would start with the default. Nothing is
// read into v when a key is unknown.
func readConfigFile(v *viper.Viper, file string, fs *pflag.FlagSet) error {
	fv := viper.New()
	fv.SetConfigFile(file)
	if err := fv.ReadInConfig(); err != nil {
		return fmt.Errorf("config file %s: %w", file, err)
	}
	var valid []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !commandLineOnly[f.Name] {
			valid = append(valid, f.Name)
		}
	})
	keys := fv.AllKeys() // lower-cased, nested ones as "a.b"
	sort.Strings(keys)
	var errs []error
	for _, k := range keys {
		switch {
		case commandLineOnly[k]:
			errs = append(errs, fmt.Errorf("config file %s: %q can only be given on the command line", file, k))
		case fs.Lookup(k) == nil:
			msg := fmt.Sprintf("config file %s: unknown key %q", file, k)
			if c := closest(k, valid); c != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", c)
			}
			errs = append(errs, errors.New(msg+"; keys are the flag names, see node --help"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return v.MergeConfigMap(fv.AllSettings())
}

// commandLineOnly are the flags a config file cannot set.
var commandLineOnly = map[string]bool{"config": true, "version": true}

// closest returns the candidate nearest to key in edit distance, or ""
// when even the nearest needs more than a third of key's length plus one
// edits (a swap of two letters is two): then it is no likely misspelling.
func closest(key string, candidates []string) string {
	best, bestD := "", len(key)/3+2
	for _, c := range candidates {
		if d := editDistance(key, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (byte-wise:
// flag names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// newLogger returns the member's logger: slog's text or JSON handler on w
// at level.
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log-format %q: want text or json", format)
}
