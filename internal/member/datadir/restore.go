package datadir

import (
	"fmt"
	"io"
	"os"

	"github.com/litek8s/litek8s/internal/raftstore"
)

// Restore prepares an empty data dir from a backup (what
// raftstore.Backup wrote; `ctl snapshot restore`): a member started on it
// with ID id is a new single-member cluster holding every object of the
// backup, which other members then join. The cluster is new in every other
// way too: a new CA and new tokens (adminToken and joinToken when given),
// since the old cluster's may be lost or compromised. raftAddr is the Raft
// address the member will have; a member started elsewhere corrects it
// once it leads.
func Restore(r io.Reader, dataDir, id, raftAddr, adminToken, joinToken string) (raftstore.BackupInfo, error) {
	if _, err := os.Stat(TLSDir(dataDir)); err == nil {
		return raftstore.BackupInfo{}, fmt.Errorf("member: %s already holds a member's secrets (tls/): restore into an empty data dir", dataDir)
	}
	info, err := raftstore.RestoreBackup(r, dataDir, id, raftAddr)
	if err != nil {
		return info, err
	}
	sec, err := NewSecrets(adminToken, joinToken, nil, nil)
	if err == nil {
		err = sec.Save(dataDir)
	}
	if err != nil {
		return info, fmt.Errorf("member: secrets of the restored cluster: %w", err)
	}
	return info, nil
}
