// Package kubeapi is how job-signal's front ends read through the API
// server: the webhook (pull secrets, LimitRanges it watches) and the
// plugin (a namespace's LimitRanges, read once).
package kubeapi

import (
	"context"
	"fmt"
	"io"
	"net/http"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// CoreClient is a REST client for the core API group that knows only its
// types: the typed clientset would register every API group's types at
// start (megabytes of the process's resident size) for the few kinds
// job-signal reads.
func CoreClient(config *rest.Config) (*rest.RESTClient, error) {
	return groupClient(config, corev1.SchemeGroupVersion, "/api", corev1.AddToScheme)
}

// AdmissionClient is a REST client for admissionregistration.k8s.io/v1
// that knows only its types: the webhook reads and patches its own
// configuration's caBundle with it.
func AdmissionClient(config *rest.Config) (*rest.RESTClient, error) {
	return groupClient(config, admissionregistrationv1.SchemeGroupVersion, "/apis", admissionregistrationv1.AddToScheme)
}

// groupClient is a REST client for gv under apiPath that knows only the
// types addToScheme registers (with Status, lists and watch events).
func groupClient(config *rest.Config, gv schema.GroupVersion, apiPath string, addToScheme func(*kruntime.Scheme) error) (*rest.RESTClient, error) {
	scheme := kruntime.NewScheme()
	if err := addToScheme(scheme); err != nil {
		return nil, err
	}
	config = rest.CopyConfig(config)
	config.GroupVersion = &gv
	config.APIPath = apiPath
	config.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	return rest.RESTClientFor(config)
}

// MaxAnswer bounds one answer read by Bounded: a list of a namespace's
// LimitRanges is kilobytes, and etcd stores objects of up to 1.5 MiB.
const MaxAnswer = 4 << 20

// Bounded is config with every answer's body cut at limit bytes, past
// which reading it fails: for clients that list, not for watches.
func Bounded(config *rest.Config, limit int64) *rest.Config {
	config = rest.CopyConfig(config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return boundedTransport{rt, limit} })
	return config
}

// LimitRanges lists namespace's LimitRanges.
func LimitRanges(ctx context.Context, client rest.Interface, namespace string) ([]corev1.LimitRange, error) {
	var list corev1.LimitRangeList
	if err := client.Get().Namespace(namespace).Resource("limitranges").Do(ctx).Into(&list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

type boundedTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: t.limit, limit: t.limit}
	return resp, nil
}

// boundedBody reads at most left bytes, then fails if there is more.
type boundedBody struct {
	io.ReadCloser
	left, limit int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, _ := io.ReadFull(b.ReadCloser, one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("the API server sent more than %d bytes", b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
