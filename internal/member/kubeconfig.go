package member

import (
	"encoding/base64"
	"fmt"
	"os"

	"github.com/litek8s/litek8s/internal/member/datadir"
)

// writeKubeconfig writes an admin kubeconfig for server to path.
func writeKubeconfig(path, server string, s datadir.Secrets) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: litek8s
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: litek8s
  context:
    cluster: litek8s
    user: admin
current-context: litek8s
`, server, base64.StdEncoding.EncodeToString(s.CACert), s.Token)
	return os.WriteFile(path, []byte(cfg), 0o600)
}
