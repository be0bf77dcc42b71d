package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/litek8s/litek8s/bench/internal/report"
)

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "perfcompare:", err)
	}
	os.Exit(code)
}

// errRegressed is the exit 1 verdict.
var errRegressed = errors.New("regressed")

func run(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("perfcompare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	basePath := fs.String("base", "", "api_load -json report of the base")
	branchPath := fs.String("branch", "", "api_load -json report of the branch")
	baseAgain := fs.String("base-again", "", "the base's second measurement of the regressed scenarios")
	branchAgain := fs.String("branch-again", "", "the branch's second measurement of the regressed scenarios")
	regressedOut := fs.String("regressed", "", "write the regressed scenarios here, comma-separated (empty: none)")
	th := DefaultThresholds
	fs.Float64Var(&th.OpsLoss, "ops-loss", th.OpsLoss, "tolerated loss of ops/s (fraction of base)")
	fs.Float64Var(&th.P99Gain, "p99-gain", th.P99Gain, "tolerated growth of p99 (fraction of base)")
	fs.Float64Var(&th.P99FloorMs, "p99-floor-ms", th.P99FloorMs, "p99 growths below this many ms are noise")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if *basePath == "" || *branchPath == "" || (*baseAgain == "") != (*branchAgain == "") {
		return 2, errors.New("need -base and -branch, and -base-again with -branch-again")
	}
	base, err := report.Load(*basePath)
	if err != nil {
		return 2, err
	}
	branch, err := report.Load(*branchPath)
	if err != nil {
		return 2, err
	}
	first := Compare(base, branch, th)
	writeComparison(stdout, "base vs branch", base, branch, first)
	fmt.Fprintln(stdout, "targets (issue 4):")
	TargetsSideBySide(base, branch).Write(stdout, false)
	fmt.Fprintln(stdout)
	regressed := Regressed(first)
	if *regressedOut != "" {
		if err := os.WriteFile(*regressedOut, []byte(strings.Join(regressed, ",")), 0o644); err != nil {
			return 2, err
		}
	}
	if *baseAgain == "" {
		if len(regressed) == 0 {
			fmt.Fprintln(stdout, "no regression")
		} else {
			fmt.Fprintf(stdout, "regressed once, to be measured again: %s\n", strings.Join(regressed, ", "))
		}
		return 0, nil
	}
	base2, err := report.Load(*baseAgain)
	if err != nil {
		return 2, err
	}
	branch2, err := report.Load(*branchAgain)
	if err != nil {
		return 2, err
	}
	again := Compare(base2, branch2, th)
	writeComparison(stdout, "measured again, base then branch", base2, branch2, again)
	confirmed := Confirmed(first, again)
	if len(confirmed) == 0 {
		fmt.Fprintf(stdout, "no regression: %s did not regress again (noise)\n", strings.Join(regressed, ", "))
		return 0, nil
	}
	fmt.Fprintf(stdout, "REGRESSION: %s regressed both times\n", strings.Join(confirmed, ", "))
	return 1, fmt.Errorf("%w: %s", errRegressed, strings.Join(confirmed, ", "))
}
