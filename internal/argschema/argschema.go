// Package argschema checks a tool's arguments against the JSON schema of
// its params, so that a caller (a person, or a model that can correct
// itself) learns which argument is wrong before the tool runs.
package argschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled params schema.
type Schema struct {
	s *jsonschema.Schema
}

// url names the schema in the compiler, and in its errors; a relative
// one would be resolved against the working directory.
const url = "urn:lumen:params"

// noLoader refuses every $ref outside the schema: a schema may not make
// the daemon read a file or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("a schema may only refer to itself; %s is outside it", url)
}

// Compile compiles a params schema (JSON Schema, draft 2020-12 unless it
// says otherwise with $schema). An invalid schema's error says why.
func Compile(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("argschema: not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("argschema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, errors.New(explainCompile(err))
	}
	return &Schema{s: s}, nil
}

// explainCompile says, in one line, what is wrong with a schema.
func explainCompile(err error) string {
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		var ve *jsonschema.ValidationError
		if errors.As(se.Err, &ve) {
			return "the schema is not a valid JSON schema: " + strings.Join(leaves(ve, "the schema"), "; ")
		}
	}
	return "the schema cannot be compiled: " + strings.ReplaceAll(err.Error(), url, "the schema")
}

// Check checks args, a JSON value, against the schema. The error names
// each argument that does not match, by its path (city, stops[1].name).
func (s *Schema) Check(args json.RawMessage) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("the arguments are not JSON: %w", err)
	}
	err = s.s.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errors.New(strings.Join(leaves(ve, "the arguments"), "; "))
	}
	return err
}

var english = message.NewPrinter(language.English)

// leaves are the innermost failures of a validation, each with the path
// of the value it is about, sorted: the validator's order is not stable,
// and a refusal is journaled.
func leaves(ve *jsonschema.ValidationError, top string) []string {
	out := leavesOf(ve, top)
	slices.Sort(out)
	return slices.Compact(out)
}

func leavesOf(ve *jsonschema.ValidationError, top string) []string {
	if len(ve.Causes) == 0 {
		return []string{fmt.Sprintf("%s: %s", path(ve.InstanceLocation, top), ve.ErrorKind.LocalizedString(english))}
	}
	var out []string
	for _, c := range ve.Causes {
		out = append(out, leavesOf(c, top)...)
	}
	return out
}

// path writes an instance location as a person reads it: stops[1].name.
func path(loc []string, top string) string {
	if len(loc) == 0 {
		return top
	}
	var b strings.Builder
	for i, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil && i > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}
