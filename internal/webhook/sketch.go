package webhook

import (
	"bufio"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/job-signal/job-signal/inject"
)

// sketch is what the webhook learns of an AdmissionReview it does not
// decode (busy, or over the size bound): read once as a stream that keeps
// only short strings, so that it costs a small buffer whatever the size of
// the body, and enough to tell whether the Pod is one the webhook serves.
type sketch struct {
	uid       types.UID
	meta      metav1.TypeMeta // the review's apiVersion and kind
	group     string          // request.kind
	kind      string
	operation string
	// pod holds what was read of request.object: the label inject
	// reads, the ownerReferences' kind and apiVersion, restartPolicy, and
	// as many (empty) containers as it has.
	pod      corev1.Pod
	metadata bool // request.object.metadata was read to its end
	spec     bool // request.object.spec was read to its end
	whole    bool // the review was read to its end
}

// sketchOf reads r to its end (the caller bounds it) or to the first
// error, and returns what it found by then.
func sketchOf(r io.Reader) sketch {
	var sk sketch
	s := &scan{r: bufio.NewReaderSize(r, 4<<10)}
	sk.whole = s.object(func(key string) error {
		switch key {
		case "apiVersion":
			sk.meta.APIVersion = s.str()
		case "kind":
			sk.meta.Kind = s.str()
		case "request":
			return s.object(func(key string) error {
				switch key {
				case "uid":
					sk.uid = types.UID(s.str())
				case "kind":
					return s.object(func(key string) error {
						switch key {
						case "group":
							sk.group = s.str()
						case "kind":
							sk.kind = s.str()
						default:
							s.skip()
						}
						return s.err
					})
				case "operation":
					sk.operation = s.str()
				case "object":
					return s.object(sk.object(s))
				default:
					s.skip()
				}
				return s.err
			})
		default:
			s.skip()
		}
		return s.err
	}) == nil
	return sk
}

// object reads the Pod's fields that say whether the webhook serves it.
func (sk *sketch) object(s *scan) func(string) error {
	return func(key string) error {
		switch key {
		case "metadata":
			err := s.object(func(key string) error {
				switch key {
				case "labels":
					sk.pod.Labels = nil
					return s.object(func(key string) error {
						if key == inject.LabelInject {
							sk.pod.Labels = map[string]string{key: s.str()}
						} else {
							s.skip()
						}
						return s.err
					})
				case "ownerReferences":
					sk.pod.OwnerReferences = nil
					return s.array(func() error {
						var o metav1.OwnerReference
						err := s.object(func(key string) error {
							switch key {
							case "kind":
								o.Kind = s.str()
							case "apiVersion":
								o.APIVersion = s.str()
							default:
								s.skip()
							}
							return s.err
						})
						sk.pod.OwnerReferences = append(sk.pod.OwnerReferences, o)
						return err
					})
				default:
					s.skip()
				}
				return s.err
			})
			sk.metadata = err == nil
			return err
		case "spec":
			err := s.object(func(key string) error {
				switch key {
				case "restartPolicy":
					sk.pod.Spec.RestartPolicy = corev1.RestartPolicy(s.str())
				case "containers":
					sk.pod.Spec.Containers = nil
					return s.array(func() error {
						sk.pod.Spec.Containers = append(sk.pod.Spec.Containers, corev1.Container{})
						s.skip()
						return s.err
					})
				default:
					s.skip()
				}
				return s.err
			})
			sk.spec = err == nil
			return err
		}
		s.skip()
		return s.err
	}
}
