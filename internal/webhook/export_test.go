package webhook

// WithoutManagedFields is withoutManagedFields for the benchmarks of
// package webhook_test, which reach webhooktest (it imports webhook).
var WithoutManagedFields = withoutManagedFields
