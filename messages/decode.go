package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Decoding what people and programs send: strict JSON whose errors name
// the field that is wrong by its path from the top (rules[2].priority),
// so that a person, or a model, knows where to look.

// FieldError is a value that could not be decoded, named by its path.
type FieldError struct {
	Path string // rules[2].priority
	Msg  string // what is wrong and what to write instead
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// Decode decodes one JSON value strictly into v: unknown fields, trailing
// data and wrong types are errors whose text says what to fix. An error
// inside the value is a *FieldError naming the field.
func Decode(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	err := decodeStrict(b, v)
	if err == nil {
		return nil
	}
	if path, msg := locate(b, reflect.TypeOf(v), ""); path != "" {
		return &FieldError{Path: path, Msg: msg}
	}
	return errors.New(Explain(err))
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value; send exactly one JSON object")
	}
	return nil
}

var unmarshaler = reflect.TypeFor[json.Unmarshaler]()

// locate finds the innermost value of b, of Go type t at path, that does
// not decode, and says why. It returns "" when b decodes, or when nothing
// narrower than the top can be blamed. Only error paths pay for it.
func locate(b []byte, t reflect.Type, path string) (string, string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	err := decodeStrict(b, reflect.New(t).Interface())
	if err == nil {
		return "", ""
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		// Its own decoder said what is wrong, and maybe in which part.
		if fe := (*FieldError)(nil); errors.As(err, &fe) {
			return join(path, fe.Path), fe.Msg
		}
		return path, explainValue(err)
	}
	switch t.Kind() {
	case reflect.Struct:
		ms, ok := members(b)
		if !ok {
			break
		}
		fields := jsonFields(t)
		for _, m := range ms {
			f, ok := fields[m.key]
			if !ok {
				for name, ft := range fields {
					if strings.EqualFold(name, m.key) {
						f, ok = ft, true
						break
					}
				}
			}
			if !ok {
				return join(path, m.key), "unknown field; check the spelling against the documented fields: " + strings.Join(slices.Sorted(maps.Keys(fields)), ", ")
			}
			if p, msg := locate(m.val, f, join(path, m.key)); p != "" {
				return p, msg
			}
		}
	case reflect.Map:
		ms, ok := members(b)
		if !ok {
			break
		}
		for _, m := range ms {
			if p, msg := locate(m.val, t.Elem(), join(path, m.key)); p != "" {
				return p, msg
			}
		}
	case reflect.Slice, reflect.Array:
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) != nil {
			break
		}
		for i, e := range elems {
			if p, msg := locate(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p, msg
			}
		}
	}
	if path == "" {
		return "", ""
	}
	return path, explainValue(err)
}

func join(path, key string) string {
	switch {
	case path == "":
		return key
	case strings.HasPrefix(key, "["):
		return path + key
	}
	return path + "." + key
}

type member struct {
	key string
	val json.RawMessage
}

// members returns an object's members in the order they are written.
func members(b []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil, false
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, false
		}
		out = append(out, member{key, val})
	}
	return out, true
}

// jsonFields maps the JSON names of a struct's fields, embedded ones
// included, to their types, as encoding/json names them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for n, ft := range jsonFields(et) {
					if _, ok := out[n]; !ok {
						out[n] = ft
					}
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// explainValue says what is wrong with one value, whose path is said
// before it.
func explainValue(err error) string {
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) && typ.Field == "" {
		return fmt.Sprintf("must be %s, not a JSON %s", kindName(typ.Type.Kind().String()), typ.Value)
	}
	return Explain(err)
}

// Explain turns an encoding/json error into a sentence for a person.
func Explain(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error())
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q must be %s, not a JSON %s", typ.Field, kindName(typ.Type.Kind().String()), typ.Value)
		}
		return fmt.Sprintf("expected %s, not a JSON %s", kindName(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: the input ends early"
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Sprintf("unknown field %s; check the spelling against the documented fields", f)
	}
	return strings.TrimPrefix(msg, "json: ")
}

func kindName(k string) string {
	switch k {
	case "string":
		return "a string"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "true or false"
	case "int", "int64", "uint64", "float64", "int32":
		return "a number"
	}
	return k
}
