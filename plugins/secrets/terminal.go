package secrets

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// ReadValue reads a secret's value for `lumen secret set`: one line typed
// without echo on a terminal, else all of in with one trailing newline
// dropped. A missing value is an ErrInvalid.
func ReadValue(ctx context.Context, in io.Reader, prompt io.Writer, name string) (string, error) {
	if in == nil {
		return "", fmt.Errorf("secrets: %w: no standard input to read the value from", ErrInvalid)
	}
	if f, ok := in.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			if v, ok, err := readHidden(ctx, f, prompt, name); ok {
				return v, err
			}
			fmt.Fprintf(prompt, "enter the value of %s, then Ctrl-D:\n", name)
		}
	}
	b, err := io.ReadAll(io.LimitReader(in, MaxValueLen+3))
	if err != nil {
		return "", fmt.Errorf("secrets: cannot read the value: %w", err)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("secrets: %w: no value for %s on standard input; type it, or pipe it in: lumen secret set %s --host HOST < FILE", ErrInvalid, name, name)
	}
	return v, nil
}

// readHidden reads one line from a terminal with echo off, restoring the
// terminal afterwards, also on Ctrl-C. ok is false if echo cannot be
// turned off.
func readHidden(ctx context.Context, f *os.File, prompt io.Writer, name string) (v string, ok bool, err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", false, nil
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", false, nil
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	fmt.Fprintf(prompt, "value of %s (not shown), then Enter: ", name)
	type line struct {
		s   string
		err error
	}
	got := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(f).ReadString('\n')
		got <- line{s, err}
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(prompt)
		return "", true, ctx.Err()
	case l := <-got:
		fmt.Fprintln(prompt)
		v = strings.TrimSuffix(strings.TrimSuffix(l.s, "\n"), "\r")
		if l.err != nil && !errors.Is(l.err, io.EOF) {
			return "", true, fmt.Errorf("secrets: cannot read the value: %w", l.err)
		}
		if v == "" {
			return "", true, fmt.Errorf("secrets: %w: no value typed for %s", ErrInvalid, name)
		}
		return v, true, nil
	}
}
