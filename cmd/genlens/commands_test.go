package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genlens/genlens/job/commands"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every job has a command, every command builder a job, and the command
// sits at the job's name in the tree.
func TestJobCommands(t *testing.T) {
	var names []string
	for _, jc := range commands.All {
		names = append(names, jc.Name)
		c := findCommand(t, jc.Name)
		if c == nil {
			continue
		}
		if c.GroupID == "" && c.Parent().GroupID == "" {
			t.Errorf("%s: in no help section", jc.Name)
		}
	}
	for name := range jobCommands {
		if !slices.Contains(names, name) {
			t.Errorf("jobCommands builds %q, which is not in commands.All", name)
		}
	}
}

// findCommand returns the command of a job's name in a new root.
func findCommand(t *testing.T, name string) *cobra.Command {
	t.Helper()
	root := newRoot(nil, nil)
	c, rest, err := root.Find(strings.Fields(name))
	if err != nil || len(rest) > 0 || c.CommandPath() != "genlens "+name {
		t.Errorf("%s: no such command (found %q, rest %v, %v)", name, c.CommandPath(), rest, err)
		return nil
	}
	return c
}

// The defaults of a command's flags are those of its request
// (job.Command.New, the NewXRequest constructors): a flag of a request
// field (JSON name with - for _, or a renamed flag) shows the field's
// default. The flags that reach the request only when given (ifGiven)
// are the exception: their field's default is the zero value, "unset",
// which the job reads as the default the flag shows.
func TestFlagDefaultsAreRequestDefaults(t *testing.T) {
	for _, jc := range commands.All {
		c := findCommand(t, jc.Name)
		if c == nil {
			continue
		}
		b, err := json.Marshal(jc.New())
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(b, &fields); err != nil {
			t.Fatal(err)
		}
		renamed := map[string]string{} // flag name -> field
		for k, v := range c.Annotations {
			if field, ok := strings.CutPrefix(k, "flag:"); ok {
				renamed[v] = field
			}
		}
		known := jsonFields(reflect.TypeOf(jc.New()).Elem())
		checked := 0
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return // a deprecated alias, sharing its flag's value
			}
			field, ok := renamed[f.Name]
			if !ok {
				field = strings.ReplaceAll(f.Name, "-", "_")
			}
			v, isField := fields[field]
			if !known[field] {
				return // --json, --out and other flags of the command line alone
			}
			checked++
			if _, given := f.Annotations[givenOnly]; given {
				if isField && !zeroJSON(v) {
					t.Errorf("%s --%s: set only when given, but the request's default %s = %v is not unset", jc.Name, f.Name, field, v)
				}
				return
			}
			if !sameDefault(f, v) {
				t.Errorf("%s --%s: flag default %q, request default %s = %v", jc.Name, f.Name, f.DefValue, field, v)
			}
		})
		t.Logf("%s: %d flags checked", jc.Name, checked)
		if checked == 0 {
			t.Errorf("%s: no flag of a request field checked", jc.Name)
		}
	}
}

// jsonFields returns the JSON names of the fields of a struct type,
// those of embedded structs included.
func jsonFields(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			maps.Copy(names, jsonFields(f.Type))
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" {
			if name == "" {
				name = f.Name
			}
			names[name] = true
		}
	}
	return names
}

// zeroJSON reports whether a decoded JSON value is the zero value of its
// Go field.
func zeroJSON(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case float64:
		return v == 0
	case bool:
		return !v
	case []any:
		return len(v) == 0
	}
	return false
}

// sameDefault reports whether the flag's default is v, a field's
// decoded JSON value (nil when omitted as empty).
func sameDefault(f *pflag.Flag, v any) bool {
	d := f.DefValue
	if f.Value.Type() == "duration" {
		x, err := time.ParseDuration(d)
		n, ok := v.(float64)
		return err == nil && ok && float64(x) == n
	}
	switch v := v.(type) {
	case nil:
		return d == "" || d == "0" || d == "false" || d == "[]"
	case string:
		return d == v
	case bool:
		return d == strconv.FormatBool(v)
	case float64:
		x, err := strconv.ParseFloat(d, 64)
		return err == nil && x == v
	case []any:
		var s []string
		for _, e := range v {
			s = append(s, fmt.Sprint(e))
		}
		return d == "["+strings.Join(s, ",")+"]"
	}
	return false
}
