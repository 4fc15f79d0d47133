package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// A Markdown reader just big enough for kurz's pages: headings, inline
// links and fenced code blocks, which hold neither.

var (
	headingLine = regexp.MustCompile(`^(#{1,6}) +(.+?) *#* *$`)
	// [text](target) or [text](target "title"); images too.
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?: +"[^"]*")?\)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
	linkText   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// prose returns the lines of a page outside fenced code blocks, with their
// 1-based numbers.
func prose(text string) (lines []string, numbers []int) {
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		lines = append(lines, line)
		numbers = append(numbers, i+1)
	}
	return lines, numbers
}

type heading struct {
	level int
	text  string
	slug  string
}

// headings lists a page's headings with the anchors GitHub gives them.
func headings(text string) []heading {
	var out []heading
	seen := map[string]int{}
	lines, _ := prose(text)
	for _, line := range lines {
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n, dup := seen[s]; dup {
			seen[s] = n + 1
			s = fmt.Sprintf("%s-%d", s, n+1)
		} else {
			seen[s] = 0
		}
		out = append(out, heading{level: len(m[1]), text: m[2], slug: s})
	}
	return out
}

// slug is GitHub's anchor for a heading: the text of its links, lowercased;
// letters, digits, marks, '-' and '_' kept, each space a '-', anything else
// (punctuation, backticks, symbols) dropped. Repeats get -1, -2, ... (see
// headings).
func slug(h string) string {
	h = linkText.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

type link struct {
	line   int
	target string
}

// links lists the inline links of a page outside code blocks and spans.
func links(text string) []link {
	var out []link
	lines, numbers := prose(text)
	for i, line := range lines {
		// A code span's text is no link, but a link's text may hold one:
		// blank the spans' contents, keep the rest where it is.
		line = codeSpan.ReplaceAllStringFunc(line, func(s string) string { return strings.Repeat("x", len(s)) })
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{line: numbers[i], target: m[1]})
		}
	}
	return out
}

// checkLinks returns what is wrong with the relative links of the page at
// path: a file or directory that does not exist, or an anchor that is no
// heading of the Markdown page it points into.
func checkLinks(path string) ([]string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, l := range links(string(text)) {
		if scheme.MatchString(l.target) || strings.HasPrefix(l.target, "//") {
			continue // absolute: not this repository's to check
		}
		file, anchor, _ := strings.Cut(l.target, "#")
		target := path
		if file != "" {
			target = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
		}
		where := fmt.Sprintf("%s:%d: %s", path, l.line, l.target)
		info, err := os.Stat(target)
		if err != nil {
			problems = append(problems, where+": no such file")
			continue
		}
		if anchor == "" {
			continue
		}
		if info.IsDir() || filepath.Ext(target) != ".md" {
			problems = append(problems, where+": an anchor into something that is no Markdown page")
			continue
		}
		page, err := os.ReadFile(target)
		if err != nil {
			return nil, err
		}
		found := false
		for _, h := range headings(string(page)) {
			found = found || h.slug == anchor
		}
		if !found {
			problems = append(problems, where+": no such heading in "+target)
		}
	}
	return problems, nil
}

var contentsEntry = regexp.MustCompile(`^( *)- \[.*\]\(#([^)]+)\)$`)

// checkContents returns what is wrong with the contents list of a docs
// page: the list that follows its "Contents:" line must link every ## and
// ### heading below it, in order, ### ones indented under theirs.
func checkContents(path string) ([]string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(text), "\n")
	start := -1
	for i, line := range lines {
		if line == "Contents:" {
			start = i
			break
		}
	}
	if start < 0 {
		return []string{path + `: no "Contents:" list`}, nil
	}
	var listed []string
	for _, line := range lines[start+1:] {
		if line == "" && len(listed) == 0 {
			continue
		}
		m := contentsEntry.FindStringSubmatch(line)
		if m == nil {
			break
		}
		listed = append(listed, fmt.Sprintf("%d %s", len(m[1])/2+2, m[2]))
	}
	var want []string
	for _, h := range headings(string(text)) {
		if h.level == 2 || h.level == 3 {
			want = append(want, fmt.Sprintf("%d %s", h.level, h.slug))
		}
	}
	if strings.Join(listed, "\n") != strings.Join(want, "\n") {
		return []string{fmt.Sprintf("%s: the contents list (level and anchor)\n%s\ndoes not match the headings\n%s",
			path, strings.Join(listed, "\n"), strings.Join(want, "\n"))}, nil
	}
	return nil, nil
}
