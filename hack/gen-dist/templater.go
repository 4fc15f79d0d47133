package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// templater turns an object into a Helm template. Fields to template are set
// to placeholder strings (plain words YAML never quotes); after the object is
// marshalled, each placeholder is replaced by its template text. A scalar
// placeholder stands for an inline expression; a block placeholder for a
// field's whole value, written below the key at the key's indentation.
type templater struct {
	scalars []string
	blocks  []func(keyColumn int) string
}

func (t *templater) scalar(expr string) string {
	t.scalars = append(t.scalars, expr)
	return fmt.Sprintf("KURZTPLS%dX", len(t.scalars)-1)
}

// block's f returns what follows "key:", starting with a newline.
func (t *templater) block(f func(keyColumn int) string) string {
	t.blocks = append(t.blocks, f)
	return fmt.Sprintf("KURZTPLB%dX", len(t.blocks)-1)
}

var blockLine = regexp.MustCompile(`(?m)^( *(?:- )?)([^ :]+): KURZTPLB(\d+)X$`)

func (t *templater) render(obj map[string]any) (string, error) {
	y, err := yaml.Marshal(obj)
	if err != nil {
		return "", err
	}
	// Text of config/ that looks like a template action stays literal.
	out := strings.ReplaceAll(string(y), "{{", `{{ "{{" }}`)
	var bad error
	out = blockLine.ReplaceAllStringFunc(out, func(line string) string {
		m := blockLine.FindStringSubmatch(line)
		i, _ := strconv.Atoi(m[3])
		return m[1] + m[2] + ":" + t.blocks[i](len(m[1]))
	})
	for i, expr := range t.scalars {
		token := fmt.Sprintf("KURZTPLS%dX", i)
		if !strings.Contains(out, token) {
			bad = fmt.Errorf("placeholder for %q was lost in marshalling", expr)
		}
		out = strings.ReplaceAll(out, token, expr)
	}
	if strings.Contains(out, "KURZTPL") {
		bad = fmt.Errorf("a placeholder was not replaced in:\n%s", out)
	}
	return out, bad
}

// indent is n spaces.
func indent(n int) string { return strings.Repeat(" ", n) }
