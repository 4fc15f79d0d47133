package sqlplan

import (
	"fmt"
	"time"
)

// CheckRetention reports what both stores refuse of their retention
// options, each error naming its flag: raw events must outlive a closed
// day (the rollups are computed from them), rollups must outlive raw
// events, and a deleted Link's grace cannot be negative.
func CheckRetention(retention, rollupRetention, deleteGrace time.Duration) []error {
	var errs []error
	if retention < 48*time.Hour {
		errs = append(errs, fmt.Errorf("--analytics-retention %s: at least 48h (the rollups are computed from raw events of closed days)", retention))
	}
	if rollupRetention < retention {
		errs = append(errs, fmt.Errorf("--analytics-rollup-retention %s: at least --analytics-retention (%s)", rollupRetention, retention))
	}
	if deleteGrace < 0 {
		errs = append(errs, fmt.Errorf("--analytics-delete-grace %s: negative", deleteGrace))
	}
	return errs
}
