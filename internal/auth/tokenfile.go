package auth

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ParseTokenFile reads kube's static token file (--token-auth-file): CSV
// lines of token,user,uid[,"group1,group2"]. Every user is also in
// system:authenticated.
func ParseTokenFile(r io.Reader) (map[string]*User, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	out := map[string]*User{}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		if len(rec) < 3 || rec[0] == "" || rec[1] == "" {
			return nil, fmt.Errorf("token file: line %d: want token,user,uid[,groups]", line)
		}
		if _, dup := out[rec[0]]; dup {
			return nil, fmt.Errorf("token file: line %d: a token is there twice", line)
		}
		u := &User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		u.Groups = append(u.Groups, GroupAuthenticated)
		out[rec[0]] = u
	}
}
