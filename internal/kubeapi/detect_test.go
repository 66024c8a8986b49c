package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/job-signal/job-signal/inject"
)

// apiServer is a small server on 127.0.0.1 that answers /version and
// lists of Nodes as an API server does, a page of pageSize at a time, and
// records the lists it was asked for.
type apiServer struct {
	version  string // the body of /version
	nodes    []corev1.Node
	pageSize int
	status   int         // when not 0, every Node list is answered with this code and a Status
	events   chan string // watch events (JSON lines), for a watch of Nodes

	mu    sync.Mutex
	lists []string // the query of each Node list
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/version":
		w.Write([]byte(a.version))
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1/nodes" && r.URL.Query().Get("watch") == "":
		a.mu.Lock()
		a.lists = append(a.lists, r.URL.RawQuery)
		a.mu.Unlock()
		if a.status != 0 {
			w.WriteHeader(a.status)
			fmt.Fprintf(w, `{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"%s","code":%d,"message":"nodes is forbidden: User \"x\" cannot list resource \"nodes\""}`,
				metav1.StatusReasonForbidden, a.status)
			return
		}
		from := 0
		if c := r.URL.Query().Get("continue"); c != "" {
			fmt.Sscan(c, &from)
		}
		to := min(from+a.pageSize, len(a.nodes))
		list := corev1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}, Items: a.nodes[from:to]}
		list.ResourceVersion = "7"
		if to < len(a.nodes) {
			list.Continue = fmt.Sprint(to)
		}
		json.NewEncoder(w).Encode(list)
	case r.URL.Path == "/api/v1/nodes" && r.URL.Query().Get("watch") == "true" && a.events != nil:
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case e := <-a.events:
				fmt.Fprintln(w, e)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	default:
		http.Error(w, "not served here", http.StatusNotFound)
	}
}

// node is a Node as a kubelet of version v registers it, with the bulk a
// real one has (its images).
func node(name, v string) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "5", Labels: map[string]string{"kubernetes.io/hostname": name}}}
	n.Status.NodeInfo.KubeletVersion = v
	for i := range 20 {
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{Names: []string{fmt.Sprintf("registry.example/image-%d@sha256:%064d", i, i)}, SizeBytes: 1 << 20})
	}
	return n
}

const version137 = `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`

// TestDetectAnswers: Detect against small servers on 127.0.0.1 that answer
// as an API server and its Nodes would, refuse, hang or send too much:
// each ends within its bound with what inject.ClusterFrom makes of the
// versions, or an error that says what to do.
func TestDetectAnswers(t *testing.T) {
	var many []corev1.Node
	for i := range 250 {
		many = append(many, node(fmt.Sprintf("node-%03d", i), "v1.35.0"))
	}
	skewed := append([]corev1.Node{node("old-b", "v1.31.4"), node("old-a", "v1.32.0")}, many[:3]...)
	for _, tc := range []struct {
		name    string
		server  *apiServer
		want    inject.Cluster
		wantErr string
		lists   int // Node list requests, when not 0
	}{
		{"every kubelet new enough", &apiServer{version: version137, nodes: many, pageSize: NodePage},
			inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}, "", 3},
		{"no Nodes yet", &apiServer{version: version137, pageSize: NodePage},
			inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}, "", 1},
		{"two kubelets behind", &apiServer{version: version137, nodes: skewed, pageSize: NodePage},
			inject.Cluster{Known: true, Version: "v1.37.2", HeldBack: 2, Reason: "node old-a's kubelet is v1.32.0, before 1.33 (and 1 more nodes)"}, "", 1},
		{"the API server behind", &apiServer{version: `{"gitVersion":"v1.30.14"}`, nodes: many, pageSize: NodePage},
			inject.Cluster{Known: true, Version: "v1.30.14", Reason: "the API server is v1.30.14, before 1.33"}, "", 3},
		{"may not list Nodes", &apiServer{version: version137, status: http.StatusForbidden},
			inject.Cluster{}, "needs list on nodes", 1},
		{"version too large", &apiServer{version: `{"gitVersion":"` + strings.Repeat("x", MaxAnswer) + `"}`},
			inject.Cluster{}, "more than", 0},
		{"no version", &apiServer{version: `{}`}, inject.Cluster{}, "no gitVersion", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.server)
			defer srv.Close()
			got, err := Detect(context.Background(), &rest.Config{Host: srv.URL})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
			if tc.lists != 0 && len(tc.server.lists) != tc.lists {
				t.Errorf("%d Node lists, want %d: %q", len(tc.server.lists), tc.lists, tc.server.lists)
			}
			for _, q := range tc.server.lists {
				if !strings.Contains(q, fmt.Sprintf("limit=%d", NodePage)) {
					t.Errorf("a Node list without the page size: %q", q)
				}
			}
			if tc.name == "may not list Nodes" && !apierrors.IsForbidden(err) {
				t.Errorf("the error does not wrap the API server's Forbidden: %v", err)
			}
		})
	}
}

// TestDetectHangs: a server that never answers is given up on at ctx's
// deadline (DetectTimeout at most), saying so.
func TestDetectHangs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Detect(ctx, &rest.Config{Host: srv.URL})
	if elapsed := time.Since(start); elapsed > DetectTimeout {
		t.Errorf("took %s", elapsed)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "version") {
		t.Errorf("want the deadline, reading the version, in the error: %v", err)
	}
}

// TestNodeSummary: what is kept of a Node is what NodeOf reads and what a
// store keys it by, nothing else.
func TestNodeSummary(t *testing.T) {
	full := node("worker-1", "v1.33.1")
	s := nodeSummary(&full)
	if NodeOf(s) != (inject.Node{Name: "worker-1", KubeletVersion: "v1.33.1"}) || s.ResourceVersion != "5" {
		t.Errorf("summary %+v", s)
	}
	if len(s.Status.Images) != 0 || len(s.Labels) != 0 {
		t.Errorf("the summary keeps more than it needs: %+v", s)
	}
	if got, _ := summarize("tombstone"); got != "tombstone" {
		t.Errorf("summarize changed what is not a Node: %v", got)
	}
}

// TestNodeInformer: the webhook's informer lists the Nodes a page at a
// time from the API server's storage (no resourceVersion=0, which a cache
// answers whole) and keeps only each Node's summary, for those listed and
// for those a watch brings.
func TestNodeInformer(t *testing.T) {
	var nodes []corev1.Node
	for i := range 2*NodePage + 10 {
		nodes = append(nodes, node(fmt.Sprintf("node-%03d", i), "v1.33.0"))
	}
	api := &apiServer{version: version137, nodes: nodes, pageSize: NodePage, events: make(chan string)}
	srv := httptest.NewServer(api)
	defer srv.Close()
	informer, err := NodeInformer(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go informer.Run(ctx.Done())
	synced, cancelSync := context.WithTimeout(ctx, 10*time.Second)
	defer cancelSync()
	if !cache.WaitForCacheSync(synced.Done(), informer.HasSynced) {
		t.Fatal("not synced within 10 s")
	}
	api.mu.Lock()
	lists := append([]string(nil), api.lists...)
	api.mu.Unlock()
	if len(lists) != 3 {
		t.Errorf("%d list requests, want 3 pages: %q", len(lists), lists)
	}
	for _, q := range lists {
		if strings.Contains(q, "resourceVersion=0") || !strings.Contains(q, fmt.Sprintf("limit=%d", NodePage)) {
			t.Errorf("list %q: want pages of %d from storage", q, NodePage)
		}
	}
	kept := func() []any { return informer.GetStore().List() }
	if got := len(kept()); got != len(nodes) {
		t.Fatalf("%d Nodes in the store, want %d", got, len(nodes))
	}
	added := node("joined", "v1.30.2")
	added.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
	b, _ := json.Marshal(map[string]any{"type": "ADDED", "object": added})
	select {
	case api.events <- string(b):
	case <-time.After(10 * time.Second):
		t.Fatal("the informer did not watch within 10 s")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(kept()) != len(nodes)+1 {
		if time.Now().After(deadline) {
			t.Fatal("the watched Node did not reach the store within 10 s")
		}
		time.Sleep(10 * time.Millisecond) // the store has no notification of its own here: poll, bounded
	}
	for _, obj := range kept() {
		n := obj.(*corev1.Node)
		if len(n.Status.Images) != 0 || len(n.Labels) != 0 || n.Status.NodeInfo.KubeletVersion == "" {
			t.Fatalf("the store holds more than the summary, or less: %+v", n)
		}
	}
	if n, ok, _ := informer.GetStore().GetByKey("joined"); !ok || NodeOf(n.(*corev1.Node)).KubeletVersion != "v1.30.2" {
		t.Errorf("the watched Node: %v %v", n, ok)
	}
}
