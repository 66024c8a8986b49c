package webhook

import (
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/inject/jsonscan"
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
	s := jsonscan.New(r, 4<<10)
	sk.whole = s.Object(func(key string) error {
		switch key {
		case "apiVersion":
			sk.meta.APIVersion = s.Str()
		case "kind":
			sk.meta.Kind = s.Str()
		case "request":
			return s.Object(func(key string) error {
				switch key {
				case "uid":
					sk.uid = types.UID(s.Str())
				case "kind":
					return s.Object(func(key string) error {
						switch key {
						case "group":
							sk.group = s.Str()
						case "kind":
							sk.kind = s.Str()
						default:
							s.Skip()
						}
						return s.Err()
					})
				case "operation":
					sk.operation = s.Str()
				case "object":
					return s.Object(sk.object(s))
				default:
					s.Skip()
				}
				return s.Err()
			})
		default:
			s.Skip()
		}
		return s.Err()
	}) == nil
	return sk
}

// object reads the Pod's fields that say whether the webhook serves it.
func (sk *sketch) object(s *jsonscan.Scanner) func(string) error {
	return func(key string) error {
		switch key {
		case "metadata":
			err := s.Object(func(key string) error {
				switch key {
				case "labels":
					sk.pod.Labels = nil
					return s.Object(func(key string) error {
						if key == inject.LabelInject {
							sk.pod.Labels = map[string]string{key: s.Str()}
						} else {
							s.Skip()
						}
						return s.Err()
					})
				case "ownerReferences":
					sk.pod.OwnerReferences = nil
					return s.Array(func() error {
						var o metav1.OwnerReference
						err := s.Object(func(key string) error {
							switch key {
							case "kind":
								o.Kind = s.Str()
							case "apiVersion":
								o.APIVersion = s.Str()
							default:
								s.Skip()
							}
							return s.Err()
						})
						sk.pod.OwnerReferences = append(sk.pod.OwnerReferences, o)
						return err
					})
				default:
					s.Skip()
				}
				return s.Err()
			})
			sk.metadata = err == nil
			return err
		case "spec":
			err := s.Object(func(key string) error {
				switch key {
				case "restartPolicy":
					sk.pod.Spec.RestartPolicy = corev1.RestartPolicy(s.Str())
				case "containers":
					sk.pod.Spec.Containers = nil
					return s.Array(func() error {
						sk.pod.Spec.Containers = append(sk.pod.Spec.Containers, corev1.Container{})
						s.Skip()
						return s.Err()
					})
				default:
					s.Skip()
				}
				return s.Err()
			})
			sk.spec = err == nil
			return err
		}
		s.Skip()
		return s.Err()
	}
}
