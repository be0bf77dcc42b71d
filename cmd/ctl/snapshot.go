package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/litek8s/litek8s/internal/member/adminapi"
	"github.com/litek8s/litek8s/internal/member/datadir"
	"github.com/litek8s/litek8s/internal/raftstore"
)

// SnapshotOutput describes a backup file (`snapshot save`, `inspect`,
// `restore` with -o json).
type SnapshotOutput struct {
	File string `json:"file"`
	// Index is the revision the backup holds the store at: every write
	// acknowledged before it was taken has a resourceVersion <= Index.
	Index     uint64         `json:"index"`
	Term      uint64         `json:"term"`
	Created   time.Time      `json:"created"`
	Member    string         `json:"member"`
	Objects   int            `json:"objects"`
	Resources map[string]int `json:"resources"`
	Size      int64          `json:"size"`
	SHA256    string         `json:"sha256"`
	// DataDir is where `snapshot restore` prepared a member.
	DataDir string `json:"dataDir,omitempty"`
}

func snapshotOutput(file string, info raftstore.BackupInfo) SnapshotOutput {
	return SnapshotOutput{File: file, Index: info.Index, Term: info.Term, Created: info.Created,
		Member: info.Member, Objects: info.Objects, Resources: info.Resources, Size: info.Size, SHA256: info.SHA256}
}

func newSnapshotCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "snapshot", Short: "save, inspect and restore backups of the whole store",
		Example: "  ctl snapshot save backup.db\n  ctl snapshot inspect backup.db"}
	cmd.AddCommand(
		&cobra.Command{
			Use: "save FILE",
			Short: "stream a consistent backup from the first member that answers into FILE " +
				"(written to FILE.tmp, checked, renamed)",
			Example:     "  ctl snapshot save backup.db",
			Annotations: map[string]string{annotationLong: "true"},
			Args:        cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, err := o.client(cmd)
				if err != nil {
					return err
				}
				info, err := saveSnapshot(cmd.Context(), c, args[0])
				if err != nil {
					return err
				}
				return printSnapshot(cmd.OutOrStdout(), o, "saved", snapshotOutput(args[0], info))
			},
		},
		&cobra.Command{
			Use:     "inspect FILE",
			Short:   "check a backup's format and checksum and describe it (offline)",
			Example: "  ctl snapshot inspect backup.db -o json",
			Args:    cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				info, err := inspectSnapshot(args[0])
				if err != nil {
					return err
				}
				return printSnapshot(cmd.OutOrStdout(), o, "backup", snapshotOutput(args[0], info))
			},
		},
		newRestoreCmd(o),
	)
	return cmd
}

func newRestoreCmd(o *options) *cobra.Command {
	var dataDir, id, raftAddr, adminToken, joinToken string
	cmd := &cobra.Command{
		Use: "restore FILE --data-dir DIR --id ID [--raft-addr HOST:PORT]",
		Short: "prepare an empty data dir from a backup (offline): a member started on it is a new " +
			"single-member cluster with every object of the backup and new secrets; others then join it",
		Example: "  ctl snapshot restore backup.db --data-dir data-new --id m0",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			info, err := datadir.Restore(f, dataDir, id, raftAddr, adminToken, joinToken)
			if err != nil {
				return err
			}
			out := snapshotOutput(args[0], info)
			out.DataDir = dataDir
			if o.output() != outputTable {
				return printSnapshot(cmd.OutOrStdout(), o, "restored", out)
			}
			if err := printSnapshot(cmd.OutOrStdout(), o, "restored", out); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "start the member with --id %s --data-dir %s; "+
				"its join token is in %s, its admin kubeconfig at %s once it runs\n", id, dataDir,
				filepath.Join(dataDir, "tls", "join-token"), filepath.Join(dataDir, "kubeconfig"))
			return err
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the data dir to prepare (must hold no Raft state or secrets)")
	cmd.Flags().StringVar(&id, "id", "", "ID of the member that will start on it")
	cmd.Flags().StringVar(&raftAddr, "raft-addr", raftstore.DefaultConfig().RaftAddr,
		"that member's Raft address (it corrects it once it leads)")
	cmd.Flags().StringVar(&adminToken, "admin-token", "", "admin token of the new cluster (default: none; the member keeps only its hash)")
	cmd.Flags().StringVar(&joinToken, "join-token", "", "join token of the new cluster (default: a random one)")
	cmd.MarkFlagRequired("data-dir")
	cmd.MarkFlagRequired("id")
	return cmd
}

// saveSnapshot streams GET /admin/v1/snapshot into file.tmp, syncs it,
// checks it (format and checksum) and renames it to file.
func saveSnapshot(ctx context.Context, c *adminClient, file string) (_ raftstore.BackupInfo, err error) {
	tmp := file + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return raftstore.BackupInfo{}, err
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := c.streamAny(ctx, adminapi.PathSnapshot, f); err != nil {
		return raftstore.BackupInfo{}, err
	}
	if err := f.Sync(); err != nil {
		return raftstore.BackupInfo{}, err
	}
	cerr := f.Close()
	f = nil
	if cerr != nil {
		return raftstore.BackupInfo{}, cerr
	}
	info, err := inspectSnapshot(tmp)
	if err != nil {
		return info, fmt.Errorf("snapshot from %s: %w", c.base, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return info, err
	}
	return info, syncDir(filepath.Dir(file))
}

// streamAny copies the answer to GET path from the first member that
// answers into w (a member that cannot be reached is skipped).
func (c *adminClient) streamAny(ctx context.Context, path string, w io.Writer) error {
	var errs []error
	for _, base := range c.endpoints {
		err := c.stream(ctx, base, path, w)
		if !isUnreachable(err) {
			c.base = base
			return err
		}
		errs = append(errs, err)
	}
	return unreachableError(errors.Join(errs...))
}

// stream copies the answer to GET path from the member at base into w; it
// is unreachable only when no byte was written.
func (c *adminClient) stream(ctx context.Context, base, path string, w io.Writer) error {
	u := base + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.unreachable(ctx, http.MethodGet, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return &statusError{url: "GET " + u, code: resp.StatusCode, status: resp.Status, msg: errorMessage(b)}
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

func inspectSnapshot(file string) (raftstore.BackupInfo, error) {
	f, err := os.Open(file)
	if err != nil {
		return raftstore.BackupInfo{}, err
	}
	defer f.Close()
	info, err := raftstore.InspectBackup(f)
	if err != nil {
		return info, fmt.Errorf("%s: %w", file, err)
	}
	return info, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

func printSnapshot(w io.Writer, o *options, verb string, s SnapshotOutput) error {
	return o.print(w, s, func(w io.Writer) error { return snapshotText(w, verb, s) })
}

func snapshotText(w io.Writer, verb string, s SnapshotOutput) error {
	res := make([]string, 0, len(s.Resources))
	for r, n := range s.Resources {
		res = append(res, fmt.Sprintf("%s=%d", r, n))
	}
	sort.Strings(res)
	_, err := fmt.Fprintf(w, "%s %s: index %d (term %d, member %s, %s), %d objects, %d bytes, sha256 %s\n  %s\n",
		verb, s.File, s.Index, s.Term, s.Member, s.Created.Format(time.RFC3339), s.Objects, s.Size, s.SHA256,
		strings.Join(res, " "))
	return err
}
