package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Format names a source format.
type Format string

// The formats kurz import reads. Each file of this package that parses one
// says where the format is documented and which version was read.
const (
	// FormatAuto tells the format from the header or the JSON's shape.
	FormatAuto Format = "auto"
	// FormatCSV is kurz's own CSV: domain,key,url and any API link field.
	FormatCSV        Format = "csv"
	FormatYOURLSJSON Format = "yourls-json"
	FormatYOURLSCSV  Format = "yourls-csv"
	FormatShlinkJSON Format = "shlink-json"
	FormatShlinkCSV  Format = "shlink-csv"
	FormatKuttJSON   Format = "kutt-json"
	FormatBitlyJSON  Format = "bitly-json"
	FormatDubJSON    Format = "dub-json"
	FormatDubCSV     Format = "dub-csv"
)

// format is how one format is parsed: from CSV records or JSON values.
type format struct {
	name Format
	// what says in a few words what the format is, for --help and errors.
	what string
	csv  func(t *table) ([]Link, error)
	json func(values []json.RawMessage) ([]Link, error)
}

// formats are every format but auto, in the order --help lists them.
var formats = []format{
	{name: FormatCSV, what: "kurz CSV: domain,key,url[,tags,password,expires_at,utm_*,ios,android,external_id,expired_redirect_url]", csv: parseKurzCSV},
	{name: FormatYOURLSJSON, what: "YOURLS API answer to action=stats&format=json", json: parseYOURLSJSON},
	{name: FormatYOURLSCSV, what: "YOURLS yourls_url table as CSV: keyword,url,title,timestamp,ip,clicks", csv: parseYOURLSCSV},
	{name: FormatShlinkJSON, what: "Shlink REST API short-urls list pages (GET /rest/v3/short-urls)", json: parseShlinkJSON},
	{name: FormatShlinkCSV, what: "Shlink web client export (short_urls.csv), or shlink-importer's CSV", csv: parseShlinkCSV},
	{name: FormatKuttJSON, what: "Kutt API v2 links list pages (GET /api/v2/links)", json: parseKuttJSON},
	{name: FormatBitlyJSON, what: "Bitly API v4 bitlinks pages (GET /v4/groups/{group_guid}/bitlinks)", json: parseBitlyJSON},
	{name: FormatDubJSON, what: "Dub API links list pages (GET https://api.dub.co/links)", json: parseDubJSON},
	{name: FormatDubCSV, what: "Dub links export (Export links, CSV)", csv: parseDubCSV},
}

// Formats returns the names of the formats, auto first.
func Formats() []Format {
	out := make([]Format, 0, len(formats)+1)
	out = append(out, FormatAuto)
	for _, f := range formats {
		out = append(out, f.name)
	}
	return out
}

// FormatHelp describes every format, one per line, for --help.
func FormatHelp() string {
	var b strings.Builder
	for _, f := range formats {
		fmt.Fprintf(&b, "  %-12s %s\n", f.name, f.what)
	}
	return b.String()
}

func lookupFormat(name Format) (format, bool) {
	i := slices.IndexFunc(formats, func(f format) bool { return f.name == name })
	if i < 0 {
		return format{}, false
	}
	return formats[i], true
}

// Parse reads a source in the given format (FormatAuto: detected) and
// checks every link with the API's rules. The error is for a source that
// cannot be read at all; records kurz would refuse are in Result.Invalid.
func Parse(data []byte, o Options) (*Result, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	name := o.Format
	if name == FormatAuto || name == "" {
		var err error
		if name, err = Detect(data); err != nil {
			return nil, err
		}
	}
	f, ok := lookupFormat(name)
	if !ok {
		return nil, fmt.Errorf("unknown format %q", name)
	}
	var links []Link
	var err error
	if f.csv != nil {
		var t *table
		if t, err = readCSV(data); err == nil {
			links, err = f.csv(t)
		}
	} else {
		var values []json.RawMessage
		if values, err = readJSON(data); err == nil {
			links, err = f.json(values)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	r := check(links, o)
	r.Format = name
	return r, nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

// Detect tells the format of a source: JSON by its shape, CSV by its
// header.
func Detect(data []byte) (Format, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return "", errors.New("the source is empty")
	}
	if trimmed[0] == '{' || trimmed[0] == '[' {
		return detectJSON(trimmed)
	}
	return detectCSV(data)
}

// detectJSON looks at the first JSON value: a page object or a list.
func detectJSON(data []byte) (Format, error) {
	var first any
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&first); err != nil {
		return "", fmt.Errorf("read JSON: %w", err)
	}
	if list, ok := first.([]any); ok {
		if len(list) == 0 {
			return "", errors.New("the source is an empty JSON list: nothing tells its format (pass --format)")
		}
		if item, _ := list[0].(map[string]any); item["links"] != nil {
			return FormatBitlyJSON, nil // a list of Bitly pages
		}
		if f := detectJSONItem(list[0]); f != "" {
			return f, nil
		}
		return "", errors.New("the items of the JSON list are no link format kurz reads (pass --format)")
	}
	obj, _ := first.(map[string]any)
	switch obj["links"].(type) {
	case map[string]any:
		return FormatYOURLSJSON, nil
	case []any:
		return FormatBitlyJSON, nil
	}
	if _, ok := obj["stats"]; ok {
		return FormatYOURLSJSON, nil // a YOURLS answer with no links
	}
	if _, ok := obj["shortUrls"]; ok {
		return FormatShlinkJSON, nil
	}
	if data, ok := obj["data"].([]any); ok {
		if len(data) == 0 {
			return FormatKuttJSON, nil // Kutt's page envelope: total, limit, skip, data
		}
		if f := detectJSONItem(data[0]); f == FormatKuttJSON {
			return f, nil
		}
	}
	return "", errors.New("the JSON object is no export format kurz reads (pass --format)")
}

// detectJSONItem tells a format from one link object.
func detectJSONItem(item any) Format {
	obj, _ := item.(map[string]any)
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				return false
			}
		}
		return true
	}
	switch {
	case has("shortCode", "longUrl"):
		return FormatShlinkJSON
	case has("long_url"):
		return FormatBitlyJSON
	case has("address", "target"):
		return FormatKuttJSON
	case has("domain", "key", "url"):
		return FormatDubJSON
	}
	return ""
}

// detectCSV tells a CSV format from its header.
func detectCSV(data []byte) (Format, error) {
	t, err := readCSV(data)
	if err != nil {
		return "", err
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if t.index(looseName, n) < 0 {
				return false
			}
		}
		return true
	}
	switch {
	case has("shortlink", "destinationurl"):
		return FormatDubCSV, nil
	case has("longurl", "shortcode"), has("longurl", "shorturl"):
		return FormatShlinkCSV, nil
	case has("keyword", "url"):
		return FormatYOURLSCSV, nil
	case has("key", "url"):
		return FormatCSV, nil
	}
	return "", fmt.Errorf("the CSV header %q is no format kurz reads: kurz's own CSV needs key and url columns (and domain, or --domain); pass --format to force one", strings.Join(t.header, ","))
}
