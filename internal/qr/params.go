package qr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"net/url"
	"strconv"
	"strings"
)

// Params are the parameters of a QR code request.
type Params struct {
	// Download asks for Content-Disposition: attachment.
	Download bool
	// Options without Content, which the caller sets to the short link.
	Options Options
}

// Parameter names, as the API documents them.
const (
	paramDownload   = "download"
	paramColor      = "color"
	paramBackground = "background"
	paramSize       = "size"
	paramLevel      = "level"
	paramMargin     = "margin"
	paramFormat     = "format"
)

// ParseParams reads the parameters from the query string and/or a JSON
// object body (nil or empty means none); the query wins when both give a
// value. An empty value (or JSON null) counts as not given. JSON values may
// be typed (true, 512) or strings ("true", "512"). Unknown parameters are
// ignored.
//
// Invalid values come back as field errors keyed by parameter name (the API
// answers 422 with them); a body that is not a JSON object is the returned
// error (the API answers 400).
func ParseParams(query url.Values, body []byte) (Params, map[string][]string, error) {
	fields, err := bodyFields(body)
	if err != nil {
		return Params{}, nil, err
	}
	value := func(name string) (string, bool) {
		if v := query.Get(name); v != "" {
			return v, true
		}
		v, ok := fields[name]
		return v.text, ok
	}
	// isString tells a JSON string from a JSON literal, for colours.
	isString := func(name string) bool {
		return query.Get(name) != "" || fields[name].isString
	}

	p := Params{Options: DefaultOptions()}
	errs := map[string][]string{}
	fail := func(name, msg string) { errs[name] = append(errs[name], msg) }

	if v, ok := value(paramDownload); ok {
		switch strings.ToLower(v) {
		case "true", "1":
			p.Download = true
		case "false", "0":
			p.Download = false
		default:
			fail(paramDownload, "The download field must be true or false.")
		}
	}
	for _, c := range []struct {
		name string
		dst  *color.RGBA
	}{{paramColor, &p.Options.Foreground}, {paramBackground, &p.Options.Background}} {
		if v, ok := value(c.name); ok {
			rgba, ok := parseHex(v)
			if !ok || !isString(c.name) {
				fail(c.name, fmt.Sprintf("The %s must be a hex colour like #1A2B3C.", c.name))
				continue
			}
			*c.dst = rgba
		}
	}
	if v, ok := value(paramSize); ok {
		if n, msg := parseInt(paramSize, v, MinSize, MaxSize); msg != "" {
			fail(paramSize, msg)
		} else {
			p.Options.Size = n
		}
	}
	if v, ok := value(paramLevel); ok {
		l := strings.ToUpper(v)
		if _, known := levels[l]; !known {
			fail(paramLevel, "The level must be one of L, M, Q, H.")
		} else {
			p.Options.Level = l
		}
	}
	if v, ok := value(paramMargin); ok {
		if n, msg := parseInt(paramMargin, v, 0, MaxMargin); msg != "" {
			fail(paramMargin, msg)
		} else {
			p.Options.Margin = n
		}
	}
	if v, ok := value(paramFormat); ok {
		switch f := Format(strings.ToLower(v)); f {
		case PNG, SVG:
			p.Options.Format = f
		default:
			fail(paramFormat, "The format must be png or svg.")
		}
	}

	if len(errs) > 0 {
		return p, errs, nil
	}
	return p, nil, nil
}

// bodyValue is a body parameter as text: a string as it is, a number or
// boolean as its JSON text. Objects and arrays keep their JSON text too,
// which no parameter accepts, so they become field errors.
type bodyValue struct {
	text     string
	isString bool
}

// bodyFields reads a JSON object body; null and "" values are left out.
func bodyFields(body []byte) (map[string]bodyValue, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("qr parameters: the body is not a JSON object: %w", err)
	}
	out := make(map[string]bodyValue, len(raw))
	for k, v := range raw {
		switch {
		case len(v) == 0 || string(v) == "null":
			continue
		case v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, fmt.Errorf("qr parameters: %s: %w", k, err)
			}
			if s != "" {
				out[k] = bodyValue{text: s, isString: true}
			}
		default:
			out[k] = bodyValue{text: string(v)}
		}
	}
	return out, nil
}

// parseHex reads #RGB or #RRGGBB (the # may be left out, since an
// unencoded # in a query string starts the fragment).
func parseHex(s string) (color.RGBA, bool) {
	s = strings.TrimPrefix(s, "#")
	if len(s) != 3 && len(s) != 6 {
		return color.RGBA{}, false
	}
	var v [6]byte
	for i := 0; i < len(s); i++ {
		d, ok := hexDigit(s[i])
		if !ok {
			return color.RGBA{}, false
		}
		v[i] = d
	}
	if len(s) == 3 {
		return color.RGBA{R: v[0] * 17, G: v[1] * 17, B: v[2] * 17, A: 0xff}, true
	}
	return color.RGBA{R: v[0]<<4 | v[1], G: v[2]<<4 | v[3], B: v[4]<<4 | v[5], A: 0xff}, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// parseInt reads an integer in lo..hi; the message is empty when it is one.
func parseInt(name, s string, lo, hi int) (int, string) {
	n, err := strconv.Atoi(s)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Sprintf("The %s must be an integer.", name)
	}
	if err != nil || n < lo || n > hi {
		return 0, fmt.Sprintf("The %s must be between %d and %d.", name, lo, hi)
	}
	return n, ""
}
