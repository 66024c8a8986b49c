package webhook

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/job-signal/job-signal/inject"
)

// maxEventMessage bounds an Event's message (the API server takes 1 KiB
// for events.k8s.io's note; a core Event's is kept as short).
const maxEventMessage = 1024

// PodEvents records Warning Events about the webhook's own Pod (namespace,
// name and, when known, uid: what kubectl describe pod matches), as
// component job-signal-webhook, through client.
func PodEvents(client rest.Interface, namespace, pod, uid string) func(ctx context.Context, reason, message string) error {
	return func(ctx context.Context, reason, message string) error {
		now := metav1.NewTime(time.Now())
		event := &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{GenerateName: pod + ".", Namespace: namespace},
			InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: namespace, Name: pod,
				UID: types.UID(uid)},
			Reason: reason, Message: inject.OneLine(message, maxEventMessage), Type: corev1.EventTypeWarning,
			Source:         corev1.EventSource{Component: program},
			FirstTimestamp: now, LastTimestamp: now, Count: 1,
			ReportingController: "job-signal.dev/" + program, ReportingInstance: pod,
		}
		return client.Post().Namespace(namespace).Resource("events").Body(event).Do(ctx).Error()
	}
}
