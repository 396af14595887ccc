// Package docgen writes the references in docs/ from the code they
// describe: the CLI's from its cobra commands, lumen.yaml's from the
// daemon's configuration struct. Tests compare them with the files, so
// a reference cannot go stale.
package docgen

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CLI is the Markdown reference of root and every command under it
// (hidden ones and cobra's help and completion left out).
func CLI(root *cobra.Command) []byte {
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		cmds = append(cmds, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	var b bytes.Buffer
	b.WriteString("# The lumen command\n\n")
	b.WriteString("<!-- Generated from the commands' own help by `task docs`; a test fails when it is stale. -->\n\n")
	fmt.Fprintf(&b, "%s\n\nEvery command takes `--server URL` (default `$NATS_URL`, else `nats://127.0.0.1:4222`) and `--timeout DURATION` (default 30s), and `--help`.\n\n", root.Long)
	for _, c := range cmds[1:] {
		fmt.Fprintf(&b, "- [`%s`](#%s) — %s\n", c.CommandPath(), Anchor(c.CommandPath()), c.Short)
	}
	for _, c := range cmds[1:] {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n```\n%s\n```\n", c.CommandPath(), c.Short, c.UseLine())
		if c.Long != "" {
			fmt.Fprintf(&b, "\n%s\n", indentCode(c.Long))
		}
		if c.Example != "" {
			fmt.Fprintf(&b, "\nExamples:\n\n```sh\n%s\n```\n", strings.TrimRight(c.Example, "\n"))
		}
		if fl := c.NonInheritedFlags(); fl.HasAvailableFlags() {
			fmt.Fprintf(&b, "\nFlags:\n\n```\n%s```\n", withoutHelp(fl).FlagUsages())
		}
	}
	return b.Bytes()
}

// indentCode keeps the indented blocks of a help text (lists, examples)
// as they are by fencing them: Markdown would reflow them.
func indentCode(long string) string {
	var out []string
	in := false
	for _, l := range strings.Split(long, "\n") {
		code := strings.HasPrefix(l, "  ")
		switch {
		case code && !in:
			out = append(out, "```")
			in = true
		case !code && in && l != "":
			// The fence closes before the blank line that ends the block.
			if n := len(out); out[n-1] == "" {
				out = append(out[:n-1], "```", "")
			} else {
				out = append(out, "```", "")
			}
			in = false
		}
		out = append(out, l)
	}
	if in {
		out = append(out, "```")
	}
	return strings.Join(out, "\n")
}

// withoutHelp is fs without --help, which every command has.
func withoutHelp(fs *pflag.FlagSet) *pflag.FlagSet {
	out := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			out.AddFlag(f)
		}
	})
	return out
}

// Anchor is the id GitHub gives a heading.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// Key is one key of a YAML configuration: its dotted path, its type, its
// default (empty when none is given), the flag that sets it, and what it
// is.
type Key struct {
	Path, Type, Default, Flag, Doc string
}

// Keys lists the YAML keys of a configuration struct of type cfg, with
// defaults read from defaults (a value of that type). A key's doc is the
// usage of the flag of flags that sets it (flagKeys maps a flag to its
// key's path), else the field's `doc` tag; a key with neither is an
// error, so that every key is explained.
func Keys(defaults any, flags *pflag.FlagSet, flagKeys map[string]string) ([]Key, error) {
	byKey := map[string]*pflag.Flag{}
	for name, key := range flagKeys {
		if f := flags.Lookup(name); f != nil {
			byKey[key] = f
		}
	}
	var keys []Key
	var missing []string
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			path := prefix + name
			fv := v.Field(i)
			if f.Type.Kind() == reflect.Struct && f.Tag.Get("doc") == "" && byKey[path] == nil {
				walk(fv, path+".")
				continue
			}
			k := Key{Path: path, Type: typeName(f.Type), Default: value(fv), Doc: f.Tag.Get("doc")}
			if fl := byKey[path]; fl != nil {
				k.Flag = "--" + fl.Name
				if k.Doc == "" {
					k.Doc = fl.Usage
				}
				// The flag's default says it for people (auto: which port).
				if d := fl.DefValue; !slices.Contains([]string{"", "0", "false", "[]"}, d) {
					k.Default = d
				}
			}
			if k.Doc == "" {
				missing = append(missing, path)
			}
			keys = append(keys, k)
		}
	}
	walk(reflect.ValueOf(defaults), "")
	if len(missing) > 0 {
		return keys, fmt.Errorf("docgen: keys with no flag and no doc tag: %s", strings.Join(missing, ", "))
	}
	return keys, nil
}

// Config is the Markdown reference of keys, under title and intro.
func Config(title, intro string, keys []Key) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n<!-- Generated from the configuration's struct and lumen up's flags by `task docs`; a test fails when it is stale. -->\n\n%s\n\n", title, intro)
	b.WriteString("| Key | Flag | Type | Default | What it is |\n|---|---|---|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Path, code(k.Flag), k.Type, code(k.Default), cell(k.Doc))
	}
	return b.Bytes()
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// cell is s in one table cell: on one line, its pipes escaped, the
// backquotes a flag usage names its value with dropped.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("|", `\|`, "`", "").Replace(s)
}

func typeName(t reflect.Type) string {
	switch {
	case t.Kind() == reflect.Pointer:
		return typeName(t.Elem())
	case t.String() == "time.Duration":
		return "duration"
	case t.Kind() == reflect.Slice:
		return "list of " + typeName(t.Elem())
	case t.Kind() == reflect.Map:
		return "map of " + typeName(t.Key()) + " to " + typeName(t.Elem())
	case t.Kind() == reflect.Struct:
		var fields []string
		for i := range t.NumField() {
			if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
				fields = append(fields, name)
			}
		}
		return "object {" + strings.Join(fields, ", ") + "}"
	case t.Kind() == reflect.Float64:
		return "number"
	case slices.Contains([]reflect.Kind{reflect.Int, reflect.Int64}, t.Kind()):
		return "integer"
	}
	return t.Kind().String()
}

// value is v as a default: empty when it is the zero value.
func value(v reflect.Value) string {
	if v.IsZero() {
		return ""
	}
	switch v.Kind() {
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Pointer:
		return value(v.Elem())
	}
	return fmt.Sprint(v.Interface())
}
