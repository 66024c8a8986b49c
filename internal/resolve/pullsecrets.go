package resolve

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
)

// PullSecrets is a keychain made of a Pod's imagePullSecrets (types
// kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg), matched to a
// repository as the kubelet does: the key's host (with '*' standing for
// one DNS label) and, when it has one, its path as a prefix of the
// repository; the most specific key wins.
type PullSecrets struct {
	entries []secretEntry
}

type secretEntry struct {
	host, path string
	auth       authn.AuthConfig
}

type dockerConfig map[string]authn.AuthConfig

// KeychainFromSecrets reads the secrets; one that cannot be read is an
// error naming it.
func KeychainFromSecrets(secrets []corev1.Secret) (*PullSecrets, error) {
	k := &PullSecrets{}
	for _, s := range secrets {
		var auths dockerConfig
		switch s.Type {
		case corev1.SecretTypeDockerConfigJson:
			var file struct {
				Auths dockerConfig `json:"auths"`
			}
			if err := json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &file); err != nil {
				return nil, fmt.Errorf("secret %s/%s: %s: %w", s.Namespace, s.Name, corev1.DockerConfigJsonKey, err)
			}
			auths = file.Auths
		case corev1.SecretTypeDockercfg:
			if err := json.Unmarshal(s.Data[corev1.DockerConfigKey], &auths); err != nil {
				return nil, fmt.Errorf("secret %s/%s: %s: %w", s.Namespace, s.Name, corev1.DockerConfigKey, err)
			}
		default:
			continue // the kubelet ignores other types too
		}
		for key, auth := range auths {
			host, p := splitKey(key)
			k.entries = append(k.entries, secretEntry{host: host, path: p, auth: auth})
		}
	}
	return k, nil
}

// splitKey turns "https://index.docker.io/v1/" or "registry.example/team"
// into host and path.
func splitKey(key string) (host, p string) {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	host, p, _ = strings.Cut(strings.TrimSuffix(key, "/"), "/")
	if host == "docker.io" || host == "index.docker.io" || host == "registry-1.docker.io" {
		host, p = "index.docker.io", strings.TrimPrefix(strings.TrimPrefix(p, "v1"), "/")
	}
	return host, p
}

// Resolve picks the credentials for a repository (authn.Keychain).
func (k *PullSecrets) Resolve(target authn.Resource) (authn.Authenticator, error) {
	host := target.RegistryStr()
	repo := ""
	if r, ok := target.(interface{ RepositoryStr() string }); ok {
		repo = r.RepositoryStr()
	}
	best, bestLen := -1, -1
	for i, e := range k.entries {
		if !hostMatches(e.host, host) || e.path != "" && repo != e.path && !strings.HasPrefix(repo, e.path+"/") {
			continue
		}
		if l := len(e.host) + len(e.path); l > bestLen {
			best, bestLen = i, l
		}
	}
	if best < 0 {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(k.entries[best].auth), nil
}

// hostMatches compares host[:port] with a pattern whose labels may be '*'.
func hostMatches(pattern, host string) bool {
	pattern, host = strings.ToLower(pattern), strings.ToLower(host)
	pLabels, hLabels := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pLabels) != len(hLabels) {
		return false
	}
	for i := range pLabels {
		if ok, _ := path.Match(pLabels[i], hLabels[i]); !ok {
			return false
		}
	}
	return true
}
