package resolve

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
)

func TestPullSecrets(t *testing.T) {
	secrets := []corev1.Secret{
		{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths": {
			"https://index.docker.io/v1/": {"username": "hub", "password": "h"},
			"registry.example": {"username": "all", "password": "a"},
			"registry.example/team": {"username": "team", "password": "t"},
			"*.mirror.example:5000": {"username": "wild", "password": "w"}}}`)}},
		{Type: corev1.SecretTypeDockercfg, Data: map[string][]byte{corev1.DockerConfigKey: []byte(`{"old.example": {"username": "old", "password": "o"}}`)}},
		{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"x": []byte("not a docker config")}},
	}
	k, err := KeychainFromSecrets(secrets)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ repo, user string }{
		{"busybox", "hub"},
		{"docker.io/library/busybox", "hub"},
		{"registry.example/tool", "all"},
		{"registry.example/team/tool", "team"},
		{"registry.example/teamwork/tool", "all"},
		{"eu.mirror.example:5000/xy", "wild"},
		{"mirror.example:5000/xy", ""},
		{"old.example/yy", "old"},
		{"other.example/zz", ""},
	} {
		repo, err := name.NewRepository(tc.repo)
		if err != nil {
			t.Fatal(err)
		}
		a, err := k.Resolve(repo)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := authn.Authorization(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Username != tc.user {
			t.Errorf("%s: user %q, want %q", tc.repo, cfg.Username, tc.user)
		}
	}
	bad := []corev1.Secret{{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte("{")}}}
	if _, err := KeychainFromSecrets(bad); err == nil {
		t.Error("a broken secret: want an error")
	}
}
