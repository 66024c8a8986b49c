package kubectl

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/job-signal/job-signal/inject"
)

// TestAsk: the plugin reads the cluster of its kubeconfig as the webhook
// does (the API server's version, every Node's kubelet version); a user
// who may not list Nodes is told so, and the cluster is not known.
func TestAsk(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nodes   string // the answer to a Node list
		code    int
		want    inject.Cluster
		unknown string
	}{
		{"every kubelet 1.33 or later", `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"a"},"status":{"nodeInfo":{"kubeletVersion":"v1.34.0"}}}]}`,
			http.StatusOK, inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}, ""},
		{"a kubelet behind", `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"a"},"status":{"nodeInfo":{"kubeletVersion":"v1.31.0"}}}]}`,
			http.StatusOK, inject.Cluster{Known: true, Version: "v1.37.2", HeldBack: 1, Reason: "node a's kubelet is v1.31.0, before 1.33"}, ""},
		{"may not list Nodes", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"nodes is forbidden"}`,
			http.StatusForbidden, inject.Cluster{}, "may not list the cluster's Nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/version":
					w.Write([]byte(`{"gitVersion":"v1.37.2"}`))
				case "/api/v1/nodes":
					w.WriteHeader(tc.code)
					w.Write([]byte(tc.nodes))
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			path := filepath.Join(t.TempDir(), "kubeconfig")
			err := clientcmd.WriteToFile(clientcmdapi.Config{
				Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: srv.URL}},
				AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": {Token: "x"}},
				Contexts:       map[string]*clientcmdapi.Context{"x": {Cluster: "c", AuthInfo: "u"}},
				CurrentContext: "x",
			}, path)
			if err != nil {
				t.Fatal(err)
			}
			got := Cluster{Kubeconfig: path}.ask(context.Background())
			if got.cluster != tc.want || !strings.Contains(got.unknown, tc.unknown) || (tc.unknown == "") != (got.unknown == "") {
				t.Errorf("%+v, want %+v and a note saying %q", got, tc.want, tc.unknown)
			}
		})
	}
}
