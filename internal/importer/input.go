package importer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// table is a CSV source: its header and rows, each with its line.
type table struct {
	header []string
	rows   [][]string
	lines  []int
}

// readCSV reads a CSV with a header row. The delimiter is the header's:
// a comma, else a semicolon or a tab (spreadsheets in some locales write
// semicolons). Every row must have the header's number of fields.
func readCSV(data []byte) (*table, error) {
	r := csv.NewReader(bytes.NewReader(data))
	headerLine, _, _ := bytes.Cut(data, []byte("\n"))
	switch {
	case bytes.ContainsRune(headerLine, ','):
	case bytes.ContainsRune(headerLine, ';'):
		r.Comma = ';'
	case bytes.ContainsRune(headerLine, '\t'):
		r.Comma = '\t'
	}
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the CSV has no header row")
		}
		return nil, fmt.Errorf("CSV header: %w", err)
	}
	t := &table{header: make([]string, len(header))}
	for i, h := range header {
		t.header[i] = strings.TrimSpace(h)
	}
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("CSV: %w", err) // names the line
		}
		line, _ := r.FieldPos(0)
		t.rows = append(t.rows, row)
		t.lines = append(t.lines, line)
	}
}

// index returns the column whose header, normalized by norm, is name
// (already normalized); -1 when there is none.
func (t *table) index(norm func(string) string, name string) int {
	for i, h := range t.header {
		if norm(h) == name {
			return i
		}
	}
	return -1
}

// cell returns row's value in column i, "" when i < 0.
func cell(row []string, i int) string {
	if i < 0 {
		return ""
	}
	return row[i]
}

// looseName normalizes a header for matching: lowercase, without spaces
// and underscores ("Short link" and "short_link" are "shortlink"), as
// shlink-importer does with spaces.
func looseName(h string) string {
	return strings.NewReplacer(" ", "", "_", "").Replace(strings.ToLower(strings.TrimSpace(h)))
}

// at names a CSV row in messages.
func (t *table) at(i int) string { return "line " + strconv.Itoa(t.lines[i]) }

// readJSON reads one JSON value or several in a row (pages of a list API
// saved one after the other, `curl ... >> links.json`).
func readJSON(data []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var values []json.RawMessage
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return values, nil
		}
		if err != nil {
			return nil, fmt.Errorf("JSON value %d: %w", len(values)+1, err)
		}
		values = append(values, v)
	}
}

// listOrPages reads values that are each a list of items or a page object
// holding its items under key (or under path, nested); items are decoded
// into T. at names each item for messages.
func listOrPages[T any](values []json.RawMessage, path ...string) (items []T, at []string, err error) {
	for vi, v := range values {
		raw := v
		if t := bytes.TrimLeft(v, " \t\r\n"); len(t) > 0 && t[0] == '{' {
			for _, key := range path {
				var obj map[string]json.RawMessage
				if err := json.Unmarshal(raw, &obj); err != nil {
					return nil, nil, fmt.Errorf("JSON value %d: %w", vi+1, err)
				}
				if raw = obj[key]; raw == nil {
					return nil, nil, fmt.Errorf("JSON value %d has no %q", vi+1, strings.Join(path, "."))
				}
			}
		}
		var page []T
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, nil, fmt.Errorf("JSON value %d: %w", vi+1, err)
		}
		for i := range page {
			name := fmt.Sprintf("item %d", i+1)
			if len(values) > 1 {
				name = fmt.Sprintf("page %d item %d", vi+1, i+1)
			}
			items = append(items, page[i])
			at = append(at, name)
		}
	}
	return items, at, nil
}

// splitShortURL reads domain and key from a short URL: its host and its
// path without the leading slash. A URL without a scheme ("bit.ly/abc",
// Bitly's ids) is read as https.
func splitShortURL(s string) (domain, key string, err error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return "", "", fmt.Errorf("short URL %q is not a URL with a host", s)
	}
	return u.Hostname(), strings.TrimPrefix(u.Path, "/"), nil
}

// dateLayouts are the date-times sources write; a time without a zone is
// UTC (Kutt's SQLite dates, YOURLS's MySQL ones, kurz CSV's).
var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05-0700", // Bitly: 2020-09-19T10:55:26+0000
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
	"2006-01-02",
}

// parseTime reads a date-time in one of dateLayouts, in UTC. Years before
// 1970 or after 9999 are refused, as the API refuses them.
func parseTime(s string) (*time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil && t.Year() >= 1970 && t.Year() <= 9999 {
			t = t.UTC()
			return &t, nil
		}
	}
	return nil, fmt.Errorf("%q is not a date-time kurz reads (RFC 3339, e.g. 2026-01-31T12:00:00Z)", s)
}

// text is a JSON value read as text: a string, a number or a bool as
// written, "" for null. Sources type the same field differently (YOURLS
// writes clicks as strings, Dub an external id as a string).
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = text(s)
		return nil
	}
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		return fmt.Errorf("%s is not a plain value", b)
	}
	*t = text(b)
	return nil
}

// set reports whether a value is there and means something: not empty,
// not zero (0, 0.00), not false.
func (t text) set() bool {
	s := strings.TrimSpace(string(t))
	if s == "" || s == "false" {
		return false
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == 0 {
		return false
	}
	return true
}
