package kubeapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// TestBoundedAnswer: an answer over the bound fails to be read, naming the
// bound, instead of being held whole; one within is read.
func TestBoundedAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		name := strings.Repeat("x", 200)
		if r.URL.Path == "/api/v1/namespaces/huge/limitranges" {
			name = strings.Repeat("x", 64<<10)
		}
		fmt.Fprintf(w, `{"apiVersion":"v1","kind":"LimitRangeList","items":[{"metadata":{"name":%q}}]}`, name)
	}))
	defer srv.Close()
	client, err := CoreClient(Bounded(&rest.Config{Host: srv.URL}, 4<<10))
	if err != nil {
		t.Fatal(err)
	}
	if items, err := LimitRanges(context.Background(), client, "small"); err != nil || len(items) != 1 {
		t.Errorf("within the bound: %v, %d items", err, len(items))
	}
	if _, err := LimitRanges(context.Background(), client, "huge"); err == nil || !strings.Contains(err.Error(), "more than 4096 bytes") {
		t.Errorf("over the bound: %v", err)
	}
}
