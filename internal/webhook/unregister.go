package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/kubeapi"
)

// UnregisterCmd is `job-signal-webhook unregister`: what the chart's
// pre-delete hook runs on helm uninstall. Helm deletes a release's Service
// first and the kinds it does not order (MutatingWebhookConfiguration)
// last; in between, the API server would send Pods to a webhook it can no
// longer reach, and refuse them (failurePolicy Fail). Deleting the
// registration first, and waiting until every API server has let it go,
// leaves nothing that blocks a Pod while the rest goes.
type UnregisterCmd struct {
	MutatingWebhookConfigurations   []string      `name:"mutating-webhook-configuration" required:"" sep:"none" placeholder:"NAME" help:"A MutatingWebhookConfiguration to delete (repeat the flag for more); one already gone is fine."`
	ValidatingWebhookConfigurations []string      `name:"validating-webhook-configuration" sep:"none" placeholder:"NAME" help:"A ValidatingWebhookConfiguration to delete too (repeat the flag for more)."`
	PolicyBindings                  []string      `name:"validating-admission-policy-binding" sep:"none" placeholder:"NAME" help:"A ValidatingAdmissionPolicyBinding to delete too (repeat the flag for more)."`
	Settle                          time.Duration `name:"settle" default:"2s" placeholder:"DURATION" help:"After the validating objects, and again after the mutating configuration, wait this long: every API server drops a deleted registration once its watch delivers the deletion, within milliseconds when healthy; nothing the API offers says when it has (default ${default})."`
	Timeout                         time.Duration `name:"timeout" default:"1m" nonzero:"" placeholder:"DURATION" help:"Give up on the API server after this (default ${default})."`
	Kubeconfig                      string        `name:"kubeconfig" placeholder:"PATH" help:"Kubeconfig to use. Default: in-cluster (the hook's ServiceAccount, which may delete the named configurations and nothing else)."`
	cli.LogOptions
}

// Validate checks the durations (kong calls it after parsing).
func (u *UnregisterCmd) Validate() error { return cli.Invalid(cli.CheckDurations(u)) }

func (u *UnregisterCmd) run(log *slog.Logger) error {
	config, err := restConfig(u.Kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig (or the in-cluster account): %w", err)
	}
	client, err := kubeapi.AdmissionClient(config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), u.Timeout)
	defer cancel()
	// What validates first, then the mutating registration, each followed
	// by the settle: the API servers' watches of the two kinds are their
	// own, and a policy still bound when the webhook no longer injects
	// would refuse the Job Pods it was there to let through.
	for _, stage := range [][]registration{
		{{"ValidatingWebhookConfiguration", "validatingwebhookconfigurations", u.ValidatingWebhookConfigurations},
			{"ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings", u.PolicyBindings}},
		{{"MutatingWebhookConfiguration", "mutatingwebhookconfigurations", u.MutatingWebhookConfigurations}},
	} {
		deleted := 0
		for _, o := range stage {
			for _, name := range o.names {
				err := client.Delete().Resource(o.resource).Name(name).Do(ctx).Error()
				switch {
				case apierrors.IsNotFound(err):
					log.Info(o.kind+" already gone", "name", name)
				case err != nil:
					return fmt.Errorf("delete %s %s: %w", o.kind, name, err)
				default:
					deleted++
					log.Info(o.kind+" deleted: the API server calls it no more", "name", name)
				}
			}
		}
		if deleted == 0 {
			continue
		}
		log.Info("waiting for the API servers to drop the registrations", "settle", u.Settle)
		select {
		case <-time.After(u.Settle):
		case <-ctx.Done():
			return fmt.Errorf("waiting --settle %s: %w (--timeout %s)", u.Settle, ctx.Err(), u.Timeout)
		}
	}
	return nil
}

// registration is the objects of one kind unregister deletes.
type registration struct {
	kind, resource string
	names          []string
}
