package main

import (
	"fmt"
	"os"
	"regexp"
	"time"
)

// webhookJobVariants are the kinds of Job creation TestWebhookJobAdmission
// times, by the name its E2E_TIMING lines use.
var webhookJobVariants = []struct{ key, what string }{
	{"none", "no webhook registered for the namespace (the reference)"},
	{"not_sent", "served namespace, no onExitCodes rule (not sent: matchConditions)"},
	{"recorded", "served namespace, an onExitCodes rule (exit-code rules recorded)"},
}

// webhookJobs runs the e2e suite's TestWebhookJobAdmission on its
// one-node cluster: the chart's Job webhooks, n server-side dry-run Job
// creations of each kind through the API, in turns (see e2e/README.md).
func (b *bench) webhookJobs() error {
	n := b.runs(200)
	output, err := b.e2eTest("webhook Job admission on a real cluster", fmt.Sprintf("%d Jobs of each kind", n),
		"TestWebhookJobAdmission", fmt.Sprintf("E2E_WEBHOOK_JOBS=%d", n))
	if err != nil || output == nil {
		return err
	}
	for _, v := range webhookJobVariants {
		re := regexp.MustCompile(`webhook_jobs variant=` + v.key + ` .*create_us=\[([0-9 ]*)\] handling_us=\[([0-9 ]*)\]`)
		found := re.FindSubmatch(output)
		if found == nil {
			os.Stderr.Write(output)
			return fmt.Errorf("e2e webhook Job admission: no E2E_TIMING line for %s", v.key)
		}
		b.rows = append(b.rows, newRow("webhook: Job creation through the API, "+v.what, parseDurations(string(found[1]), time.Microsecond)))
		if handling := parseDurations(string(found[2]), time.Microsecond); len(handling) > 0 {
			b.rows = append(b.rows, newRow("webhook: its own handling time per Job, "+v.what, handling))
		}
	}
	return nil
}

// webhookJobsAnalysis explains the Job admission rows with this run's
// numbers.
func (b *bench) webhookJobsAnalysis() string {
	alone, ok1 := b.find("webhook: Job creation through the API, no webhook")
	notSent, ok2 := b.find("webhook: Job creation through the API, served namespace, no onExitCodes")
	recorded, ok3 := b.find("webhook: Job creation through the API, served namespace, an onExitCodes")
	handled, ok4 := b.find("webhook: its own handling time per Job")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return ""
	}
	return fmt.Sprintf("\nWebhook, Jobs: the chart's Job webhooks add %s (p50) to the creation of a Job whose podFailurePolicy "+
		"has an onExitCodes rule, against the same dry-run creation in a namespace the webhook is not registered for "+
		"(%s), of which the webhook itself spends %s; the rest is the API server's call over HTTPS with JSON. Any other "+
		"Job is not sent (its matchConditions, in the API server): %s against %s. Measured by server-side dry runs, "+
		"in turns, so no Job controller or storage is in the figures.\n",
		human(recorded.p50-alone.p50), human(alone.p50), human(handled.p50), human(notSent.p50), human(alone.p50))
}
