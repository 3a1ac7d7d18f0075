package main

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/genlens/genlens/fault"
	"github.com/genlens/genlens/internal/fields"
	"github.com/genlens/genlens/job"
)

// bindFlags gives cmd a flag for each field of the request req (a
// pointer to a struct) whose tag has a help text, `help:"..."`: named as
// its JSON field with "-" for "_", its default the field's value (the
// request's NewXRequest default), its usage the help text with request
// fields in braces spelled as cmd's flags. Fields of embedded structs are
// bound too, after the embedding struct's (which shadow them, as in JSON),
// and a request that reads CSV files (job.CSVOptions) gets --sep (sepFlag).
// A flag the command has is left alone, so a builder binds by hand first a
// flag whose usage is computed, renamed, or reaches the request only if given.
func bindFlags(cmd *cobra.Command, req any) {
	bindStruct(cmd, reflect.ValueOf(req).Elem())
}

func bindStruct(cmd *cobra.Command, v reflect.Value) {
	fl := cmd.Flags()
	var embedded []reflect.Value // bound after v's own fields
	for i := range v.NumField() {
		sf, fv := v.Type().Field(i), v.Field(i)
		if o, ok := fv.Addr().Interface().(*job.CSVOptions); ok {
			sepFlag(cmd, &o.Sep)
			continue
		}
		if sf.Anonymous && fv.Kind() == reflect.Struct {
			embedded = append(embedded, fv)
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
	for _, e := range embedded {
		bindStruct(cmd, e)
	}
}

// fieldHelp is the help of *v's field name, rendered as by bindFlags.
func fieldHelp(cmd *cobra.Command, v any, name string) string {
	sf, _ := reflect.TypeOf(v).Elem().FieldByName(name)
	return fields.Render(sf.Tag.Get("help"), flagOf(cmd))
}

// positional binds the arguments a of cmd, in order, to the flags named:
// the i-th argument is the value of --names[i], as if given with it
// (`genlens compare real/ fake/` is `--real real/ --fake fake/`, as
// `python -m pytorch_fid real/ fake/` takes them). An argument whose flag
// is given too, with another value, is a bad field: the command line
// cannot tell which one was meant. The arity is the command's Args
// (cobra.MaximumNArgs(len(names))).
//
// A command with commands under it ("stats", over "stats merge") reads a
// first argument that is no file and is a typo of one of them as that
// typo ("genlens stats mrege").
func positional(cmd *cobra.Command, a []string, names ...string) error {
	if len(a) > 0 && cmd.HasSubCommands() {
		cmd.SuggestionsMinimumDistance = 2
		if _, err := os.Stat(a[0]); err != nil && len(cmd.SuggestionsFor(a[0])) > 0 {
			return notACommand(cmd, a[0])
		}
	}
	for i, v := range a {
		if i >= len(names) {
			return badUsage("%s: %d arguments, at most %d (%s)", cmd.Name(), len(a), len(names), "--"+strings.Join(names, ", --"))
		}
		fl := cmd.Flags().Lookup(names[i])
		if fl.Changed && fl.Value.String() != v {
			field := strings.ReplaceAll(names[i], "-", "_")
			return fault.Fieldf(field, "%s: the argument %s and {%s} %s disagree; give {%s} once, as an argument or as the flag", cmd.Name(), v, field, fl.Value.String(), field)
		}
		if err := cmd.Flags().Set(names[i], v); err != nil {
			return badUsage("%s: argument %d (%s): %v", cmd.Name(), i+1, v, err)
		}
	}
	return nil
}

// sepFlag registers --sep, the request field sep of a command that reads
// CSV files, also spelled --delimiter (pandas' and csv's two names for
// it): the second name is normalised to the first, so the help lists one
// flag and both spellings set it.
func sepFlag(cmd *cobra.Command, sep *string) {
	fl := cmd.Flags()
	fl.StringVar(sep, "sep", "", "field separator of CSV inputs: one character such as ';' or '|', or tab (default ','; also --delimiter)")
	prev := fl.GetNormalizeFunc()
	fl.SetNormalizeFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "delimiter" {
			name = "sep"
		}
		return prev(f, name)
	})
}
