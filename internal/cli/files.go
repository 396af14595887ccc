package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/lumen-home/lumen/messages"
)

// BadFile is a file that cannot be read as YAML or JSON.
type BadFile struct{ error }

// ReadFile reads a YAML or JSON file (- for standard input) and returns
// it as written and as JSON; a file that is neither is a BadFile.
func (t *Term) ReadFile(file string) (raw, body []byte, err error) {
	if file == "-" {
		raw, err = io.ReadAll(t.Stdin)
	} else {
		raw, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, nil, err
	}
	body, err = messages.ToJSON(raw, strings.ToLower(filepath.Ext(file)))
	var se *messages.SourceError
	if errors.As(err, &se) {
		return nil, nil, BadFile{fmt.Errorf("%s:%d: %s", fileName(file), se.Line, se.Msg)}
	} else if err != nil {
		return nil, nil, BadFile{fmt.Errorf("%s: %w", fileName(file), err)}
	}
	return raw, body, nil
}

// blame points a refusal that names a field (rules[2].priority, state
// "red") at the file's line, and a syntax error at its column.
func blame(file string, raw []byte, err error) error {
	if err == nil {
		return nil
	}
	switch p := messages.Locate(raw, err.Error()); {
	case p.Col > 0:
		return fmt.Errorf("%s:%d:%d: %w", fileName(file), p.Line, p.Col, err)
	case p.Line > 0:
		return fmt.Errorf("%s:%d: %w", fileName(file), p.Line, err)
	}
	return err
}

// fileName names a file in a message; - is standard input.
func fileName(file string) string {
	if file == "-" {
		return "<stdin>"
	}
	return file
}
