package main

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/job"
)

// bindFlags gives cmd a flag for each field of the request req (a
// pointer to a struct) whose tag has a help text, `help:"..."`: named as
// its JSON field with "-" for "_", its default the field's value (the
// request's NewXRequest default), its usage the help text with request
// fields in braces spelled as cmd's flags. Fields of embedded structs are
// bound too, and a request that reads CSV files (job.CSVOptions) gets
// --sep (sepFlag). A flag the command already has is left alone, so a builder
// binds by hand, before calling bindFlags, a flag whose usage is
// computed, that is renamed, or that reaches the request only when given.
func bindFlags(cmd *cobra.Command, req any) {
	bindStruct(cmd, reflect.ValueOf(req).Elem())
}

func bindStruct(cmd *cobra.Command, v reflect.Value) {
	fl := cmd.Flags()
	for i := range v.NumField() {
		sf, fv := v.Type().Field(i), v.Field(i)
		if o, ok := fv.Addr().Interface().(*job.CSVOptions); ok {
			sepFlag(cmd, &o.Sep)
			continue
		}
		if sf.Anonymous && fv.Kind() == reflect.Struct {
			bindStruct(cmd, fv)
			continue
		}
		usage, ok := sf.Tag.Lookup("help")
		jsonName, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		name := strings.ReplaceAll(jsonName, "_", "-")
		if !ok || fl.Lookup(name) != nil {
			continue
		}
		usage = fields.Render(usage, flagOf(cmd))
		switch p := fv.Addr().Interface().(type) {
		case *string:
			fl.StringVar(p, name, *p, usage)
		case *bool:
			fl.BoolVar(p, name, *p, usage)
		case *int:
			fl.IntVar(p, name, *p, usage)
		case *int64:
			fl.Int64Var(p, name, *p, usage)
		case *uint64:
			fl.Uint64Var(p, name, *p, usage)
		case *float64:
			fl.Float64Var(p, name, *p, usage)
		case *time.Duration:
			fl.DurationVar(p, name, *p, usage)
		case *[]string:
			fl.StringSliceVar(p, name, *p, usage)
		default:
			panic(fmt.Sprintf("genlens: no flag for the field %s of type %s", sf.Name, sf.Type))
		}
	}
}
