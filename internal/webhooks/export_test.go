package webhooks

// MaxBatchBytes is maxBatchBytes for the tests of package webhooks_test.
const MaxBatchBytes = maxBatchBytes
