package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/litek8s/litek8s/internal/version"
)

// VersionOutput is what `ctl version -o json|yaml` prints: ctl's own
// build and every member's.
type VersionOutput struct {
	Client  version.Info    `json:"client"`
	Members []MemberVersion `json:"members,omitempty"`
}

// MemberVersion is one member's build, as its status reports it.
type MemberVersion struct {
	ID      string `json:"id"`
	APIURL  string `json:"apiURL"`
	Version string `json:"version,omitempty"`
	// Build is absent for a member that does not report it (older than
	// this ctl) or that cannot be reached (Error says why).
	Build *version.Info `json:"build,omitempty"`
	Error string        `json:"error,omitempty"`
}

func newVersionCmd(o *options) *cobra.Command {
	var clientOnly bool
	cmd := &cobra.Command{
		Use: "version",
		Short: "print ctl's version, commit, build date and Go version, and every member's " +
			"(--client: ctl's alone; exit 3 if a member is unreachable)",
		Example: "  ctl version\n  ctl version --client\n  ctl version -o yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := VersionOutput{Client: version.Get()}
			var unreachable error
			if !clientOnly {
				c, err := o.client(cmd)
				if err != nil {
					return err
				}
				st, err := clusterStatus(cmd.Context(), c)
				if err != nil {
					return err
				}
				out.Members = memberVersions(st)
				if n := unreachableCount(out.Members); n > 0 {
					unreachable = unreachableError(fmt.Errorf("%d of %d members unreachable", n, len(out.Members)))
				}
			}
			if err := o.print(cmd.OutOrStdout(), out, func(w io.Writer) error { return versionTable(w, out) }); err != nil {
				return err
			}
			return unreachable
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print ctl's version only (no member is asked)")
	return cmd
}

func memberVersions(st StatusOutput) []MemberVersion {
	out := make([]MemberVersion, len(st.Members))
	for i, m := range st.Members {
		out[i] = MemberVersion{ID: m.ID, APIURL: m.APIURL, Error: m.Error}
		if s := m.Status; s != nil {
			out[i].Version, out[i].Build = s.Version, s.Build
		}
	}
	return out
}

func unreachableCount(ms []MemberVersion) int {
	n := 0
	for _, m := range ms {
		if m.Error != "" {
			n++
		}
	}
	return n
}

func versionTable(w io.Writer, v VersionOutput) error {
	if _, err := fmt.Fprintf(w, "client: %s\n", v.Client); err != nil || v.Members == nil {
		return err
	}
	rows := make([][]string, len(v.Members))
	for i, m := range v.Members {
		b := m.Build
		if b == nil {
			b = &version.Info{Version: m.Version}
		}
		rows[i] = []string{m.ID, orDash(m.APIURL), orDash(b.Version), orDash(b.Commit), orDash(b.Date),
			orDash(b.GoVersion), orDash(b.Platform)}
		if m.Error != "" {
			rows[i][2] = "unreachable"
		}
	}
	if err := writeTable(w, []string{"MEMBER", "API", "VERSION", "COMMIT", "BUILT", "GO", "PLATFORM"}, rows); err != nil {
		return err
	}
	for _, m := range v.Members {
		if m.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", m.ID, m.Error)
		}
	}
	return nil
}
