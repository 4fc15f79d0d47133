package pagination

import (
	"math"
	"strconv"
)

// PerPage is the page size of every list operation (the contract says 25).
const PerPage = 25

// ParsePage reads the page query parameter. A page that is not a positive
// integer (missing, "abc", "0", "-3", "1.5", too large for an int) means 1,
// as Laravel's paginator does.
func ParsePage(raw string) int {
	n, err := strconv.ParseInt(raw, 10, 0)
	if err != nil || n < 1 {
		return 1
	}
	return int(n)
}

// Offset is the index of the first item of page, saturating instead of
// overflowing for absurd page numbers (such a page is simply past the end).
func Offset(page int) int {
	if page < 1 {
		return 0
	}
	if page-1 > math.MaxInt/PerPage {
		return math.MaxInt
	}
	return (page - 1) * PerPage
}
