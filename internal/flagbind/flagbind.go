// Package flagbind registers the flags of an options struct from its field
// tags, so each flag's name and help stand beside the field it sets and no
// package writes the same fs.XxxVar lines again:
//
//	RateLimit int `flag:"api-rate-limit" usage:"Requests per minute ..."`
//
// The field's value when Fields is called is the flag's default (options
// start from their package's DefaultOptions). Fields of kinds a tag cannot
// describe (lists, parsed values) are bound by hand with fs.Func or fs.Var.
package flagbind

import (
	"flag"
	"fmt"
	"reflect"
	"time"
)

// Fields registers a flag on fs for every field of the struct o points to
// that has a flag tag. It panics on a tagged field of a type it does not
// know: that is a programming error, found by any test that binds the
// flags.
func Fields(fs *flag.FlagSet, o any) {
	v := reflect.ValueOf(o).Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, ok := f.Tag.Lookup("flag")
		if !ok {
			continue
		}
		usage := f.Tag.Get("usage")
		switch p := v.Field(i).Addr().Interface().(type) {
		case *string:
			fs.StringVar(p, name, *p, usage)
		case *bool:
			fs.BoolVar(p, name, *p, usage)
		case *int:
			fs.IntVar(p, name, *p, usage)
		case *int64:
			fs.Int64Var(p, name, *p, usage)
		case *float64:
			fs.Float64Var(p, name, *p, usage)
		case *time.Duration:
			fs.DurationVar(p, name, *p, usage)
		default:
			panic(fmt.Sprintf("flagbind: field %s.%s (--%s) has type %s, which a flag tag cannot bind", t.Name(), f.Name, name, f.Type))
		}
	}
}
