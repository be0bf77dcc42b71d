package member

import (
	"encoding/base64"
	"fmt"
	"os"
	"time"

	"github.com/litek8s/litek8s/internal/auth"
	"github.com/litek8s/litek8s/internal/member/datadir"
)

// AdminKubeconfigTTL is how long the client certificate of an admin
// kubeconfig is valid (kubeadm's admin.conf: a year).
const AdminKubeconfigTTL = 365 * 24 * time.Hour

// adminKubeconfig is a kubeconfig for server whose user is auth.AdminUser
// in system:masters, by a client certificate of the cluster CA valid for
// ttl: no token, so a member need not hold the admin token to hand one out.
func adminKubeconfig(server string, s datadir.Secrets, ttl time.Duration) ([]byte, error) {
	cert, key, err := s.ClientCert(auth.AdminUser, []string{auth.GroupMasters}, ttl)
	if err != nil {
		return nil, err
	}
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters:
- name: litek8s
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: litek8s
  context:
    cluster: litek8s
    user: %[3]s
current-context: litek8s
`, server, b64(s.CACert), auth.AdminUser, b64(cert), b64(key)), nil
}

// writeKubeconfig writes an admin kubeconfig for server to path.
func writeKubeconfig(path, server string, s datadir.Secrets) error {
	b, err := adminKubeconfig(server, s, AdminKubeconfigTTL)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
