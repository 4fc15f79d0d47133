package manifest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kurz-dev/kurz/internal/importer"
)

// Write writes the manifests of links where o says: o.Dir, o.File, else
// stdout. It returns how many it wrote.
func Write(ctx context.Context, links []importer.Link, o Options, stdout io.Writer) (int, error) {
	ms, err := Build(ctx, links, o.Namespace, priorHashes(o, links))
	if err != nil {
		return 0, err
	}
	switch {
	case o.Dir != "":
		err = writeDir(o.Dir, ms)
	case o.File != "":
		var data []byte
		if data, err = render(ms); err == nil {
			err = writeFile(o.File, data)
		}
	default:
		var data []byte
		if data, err = render(ms); err == nil {
			_, err = stdout.Write(data)
		}
	}
	if err != nil {
		return 0, err
	}
	return len(ms), nil
}

// render writes manifests as one YAML stream.
func render(ms []Manifest) ([]byte, error) {
	var b bytes.Buffer
	for i, m := range ms {
		doc, err := yaml.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", m.Metadata.Name, err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(doc)
	}
	return b.Bytes(), nil
}

// writeFile replaces path with data: written beside it, then renamed, so a
// reader never sees half a file.
func writeFile(path string, data []byte) error {
	tmp, err := writeTemp(path, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// writeDir writes one <name>.yaml per manifest into dir: every file first
// beside its target, then all renamed into place.
func writeDir(dir string, ms []Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	temps := make([]string, 0, len(ms))
	defer func() {
		for _, t := range temps {
			_ = os.Remove(t) // gone after a rename
		}
	}()
	for _, m := range ms {
		data, err := render([]Manifest{m})
		if err != nil {
			return err
		}
		tmp, err := writeTemp(filepath.Join(dir, m.Metadata.Name+".yaml"), data)
		if err != nil {
			return err
		}
		temps = append(temps, tmp)
	}
	for i, m := range ms {
		if err := os.Rename(temps[i], filepath.Join(dir, m.Metadata.Name+".yaml")); err != nil {
			return err
		}
	}
	return nil
}

// writeTemp writes data to a new file beside path and returns its name.
func writeTemp(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Chmod(0o644), f.Close())
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return f.Name(), nil
}

// priorHashes reads the password hashes the target already holds, by
// name. What cannot be read is simply hashed anew.
func priorHashes(o Options, links []importer.Link) map[string]string {
	hashes := map[string]string{}
	switch {
	case o.Dir != "":
		for _, l := range links {
			if l.Password == "" {
				continue
			}
			name := Name(l.Domain, l.Key)
			readHashes(filepath.Join(o.Dir, name+".yaml"), hashes)
		}
	case o.File != "":
		readHashes(o.File, hashes)
	}
	return hashes
}

// readHashes adds the password hashes of the manifests in a YAML file.
func readHashes(path string, into map[string]string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return // none yet (or unreadable: then it is replaced)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m Manifest
		if err := dec.Decode(&m); err != nil {
			return // io.EOF, or a document that is not ours
		}
		if h := m.Spec.PasswordHash; h != nil && m.Kind == "Link" {
			into[m.Metadata.Name] = *h
		}
	}
}
