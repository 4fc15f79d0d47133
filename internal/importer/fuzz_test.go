package importer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kurz-dev/kurz/internal/validation"
)

// FuzzParse: no input makes Parse panic, and every link it calls valid
// passes the API's validators (what manifests and bulk items rely on).
// Seeds: the sample of every format.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range Formats() {
			o := DefaultOptions()
			o.Format, o.Domain = format, "fallback.example"
			r, err := Parse(data, o)
			if err != nil {
				continue
			}
			seen := map[string]bool{}
			for _, l := range r.Links {
				for field, msg := range map[string]string{
					"domain": validation.Hostname(l.Domain),
					"key":    validation.Key(l.Key),
					"url":    validation.URL(l.URL),
					"tags":   validation.Tags(l.Tags),
				} {
					if msg != "" {
						t.Fatalf("%s: %s: valid link with %s %s", format, l.At, field, msg)
					}
				}
				if l.Password != "" && validation.Password(l.Password) != "" {
					t.Fatalf("%s: %s: valid link with a bad password", format, l.At)
				}
				if id := l.Domain + "/" + l.Key; seen[id] {
					t.Fatalf("%s: %s twice", format, id)
				} else {
					seen[id] = true
				}
			}
		}
	})
}
