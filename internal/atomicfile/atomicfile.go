// Package atomicfile replaces a file so that a reader, or a power cut,
// never sees half of it: the content goes to a temporary file beside it,
// which is synced, given its mode and renamed over the old one, and the
// directory is synced so that the rename itself survives.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// tempInfix marks the temporary files of Write: .<name>.tmp-<random>.
const tempInfix = ".tmp-"

// Write replaces path with what write writes, with mode perm. On any
// error the old file is left as it was and the temporary one removed.
func Write(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+tempInfix+"*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("atomicfile: write %s: %w", path, err)
		}
	}()
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = write(tmp); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync() // best effort where a directory cannot be synced
		d.Close()
	}
	return nil
}

// WriteBytes replaces path with data, with mode perm.
func WriteBytes(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// IsTemp reports whether name (a base name) is a temporary file of Write,
// which a crash may leave behind.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempInfix)
}
