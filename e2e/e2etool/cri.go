package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtime "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func dial(sock string) (runtime.RuntimeServiceClient, func(), error) {
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return runtime.NewRuntimeServiceClient(conn), func() { conn.Close() }, nil
}

// container is what the suite reads about a CRI container. Times are in
// nanoseconds since the epoch: the kubelet's API rounds them to seconds,
// too coarse for the timing comparison.
type container struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	PodUID     string            `json:"podUID"`
	State      string            `json:"state"`
	ExitCode   int32             `json:"exitCode"`
	StartedAt  int64             `json:"startedAt"`
	FinishedAt int64             `json:"finishedAt"`
	Labels     map[string]string `json:"labels"`
	// SandboxCreatedAt is when the runtime created the Pod's sandbox:
	// the Pod's start on the node, before any of its containers.
	SandboxCreatedAt int64 `json:"sandboxCreatedAt"`
}

func criContainers(sock string, w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rt, done, err := dial(sock)
	if err != nil {
		return err
	}
	defer done()
	list, err := rt.ListContainers(ctx, &runtime.ListContainersRequest{})
	if err != nil {
		return err
	}
	out := []container{}
	sandboxes := map[string]int64{} // created at, by ID
	for _, c := range list.Containers {
		st, err := rt.ContainerStatus(ctx, &runtime.ContainerStatusRequest{ContainerId: c.Id})
		if status.Code(err) == codes.NotFound {
			// Removed since the listing (another test's Pod went away):
			// it is not the caller's, who still has its own.
			continue
		}
		if err != nil {
			return fmt.Errorf("status of %s: %w", c.Id, err)
		}
		created, ok := sandboxes[c.PodSandboxId]
		if !ok {
			sb, err := rt.PodSandboxStatus(ctx, &runtime.PodSandboxStatusRequest{PodSandboxId: c.PodSandboxId})
			if err != nil && status.Code(err) != codes.NotFound {
				return fmt.Errorf("status of sandbox %s: %w", c.PodSandboxId, err)
			}
			created = sb.GetStatus().GetCreatedAt() // 0 when removed since the listing
			sandboxes[c.PodSandboxId] = created
		}
		s := st.Status
		out = append(out, container{
			ID: c.Id, Name: c.Metadata.GetName(), PodUID: c.Labels["io.kubernetes.pod.uid"],
			State: s.State.String(), ExitCode: s.ExitCode,
			StartedAt: s.StartedAt, FinishedAt: s.FinishedAt, Labels: c.Labels,
			SandboxCreatedAt: created,
		})
	}
	return json.NewEncoder(w).Encode(out)
}

// criCleanup stops and removes every pod sandbox, which kills their
// containers and, unlike deleting containerd's state on disk, also tears
// down each sandbox's network namespace and CNI address.
func criCleanup(sock string, log io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rt, done, err := dial(sock)
	if err != nil {
		return err
	}
	defer done()
	list, err := rt.ListPodSandbox(ctx, &runtime.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var firstErr error
	for _, sb := range list.Items {
		fmt.Fprintf(log, "removing sandbox %s (%s/%s)\n", sb.Id[:12], sb.Metadata.GetNamespace(), sb.Metadata.GetName())
		if _, err := rt.StopPodSandbox(ctx, &runtime.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("stop sandbox %s: %w", sb.Id, err)
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtime.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("remove sandbox %s: %w", sb.Id, err)
		}
	}
	return firstErr
}
