//go:build qemu

package qemutest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Where QEMU's raspi3b maps the BCM2837's GPIO registers (physical
// addresses, as qtest writes them).
const (
	gpset0 = 0x3f20_001c
	gpclr0 = 0x3f20_0028
)

// Time limits: the whole emulated run, and qtest's socket to appear.
const (
	defaultQEMULimit = 3 * time.Minute
	dialLimit        = 20 * time.Second
)

const dtbName = "bcm2837-rpi-3-b.dtb"

// TestQEMUPi boots an emulated Raspberry Pi 3B with the guest, plays the
// button Timeline on its GPIO over qtest, and checks that the board showed
// what the simulator shows for the same script. It installs QEMU and
// downloads Debian's arm64 kernel if they are missing (kept in
// .cache/qemu/ at the repository's root, or $LUMEN_QEMU_CACHE).
func TestQEMUPi(t *testing.T) {
	start := time.Now()
	root := repoRoot(t)
	cache := os.Getenv("LUMEN_QEMU_CACHE")
	if cache == "" {
		cache = filepath.Join(root, ".cache", "qemu")
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	qemu := ensureQEMU(t)
	kernel, dtb := ensureKernel(t, cache)
	t.Logf("kernel %s, dtb %s (ready after %v)", kernel, dtb, time.Since(start).Round(time.Millisecond))

	dir := t.TempDir()
	initrd := filepath.Join(dir, "initrd.cpio")
	buildInitrd(t, root, dir, initrd)
	t.Logf("initramfs built (after %v)", time.Since(start).Round(time.Millisecond))

	want, err := Simulate()
	if err != nil {
		t.Fatalf("the simulator path: %v", err)
	}

	limit := defaultQEMULimit
	if s := os.Getenv("LUMEN_QEMU_TIMEOUT"); s != "" {
		if limit, err = time.ParseDuration(s); err != nil {
			t.Fatalf("LUMEN_QEMU_TIMEOUT: %v", err)
		}
	}
	run := boot(t, qemu, kernel, dtb, initrd, filepath.Join(dir, "qtest.sock"), limit)
	_ = os.WriteFile(filepath.Join(cache, "serial.log"), run.serial.Bytes(), 0o644)

	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
	}
	switch {
	case run.err != nil:
		fail("QEMU: %v", run.err)
	case run.bootTime == 0:
		fail("the guest's init never started")
	case run.verdict != VerdictOK:
		fail("the guest's verdict is %q, not %q", run.verdict, VerdictOK)
	}
	for _, f := range run.fails {
		fail("guest: %s", f)
	}
	if run.playErr != nil {
		fail("playing the button timeline: %v", run.playErr)
	}
	if run.inputErr != nil {
		fail("playing the input timeline: %v", run.inputErr)
	}
	for _, d := range Compare(run.got, want) {
		fail("emulated board and simulator differ: %s", d)
	}
	for _, l := range run.got.LEDs {
		t.Logf("board: %s", l)
	}
	t.Logf("board gestures %v, simulator %v", run.got.Gestures, want.Gestures)
	t.Logf("board input BCM %d %v, simulator %v", InputPin, run.got.Inputs, want.Inputs)
	t.Logf("host played edges at %v", run.played)
	t.Logf("boot to init %v, guest run %v, QEMU total %v, harness total %v",
		run.bootTime.Round(time.Millisecond), run.guestTime.Round(time.Millisecond),
		run.total.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if t.Failed() {
		t.Logf("serial console (also in %s):\n%s", filepath.Join(cache, "serial.log"), run.serial.String())
	}
}

// repoRoot is the directory of go.mod above the test's directory.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// command runs a command, as root (through sudo when not root) if asRoot,
// and returns its standard output; an error carries its standard error.
func command(dir string, asRoot bool, name string, args ...string) ([]byte, error) {
	if asRoot && os.Geteuid() != 0 {
		args = append([]string{"-n", name}, args...)
		name = "sudo"
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

var aptUpdated bool

func aptUpdate(t *testing.T) {
	t.Helper()
	if aptUpdated {
		return
	}
	t.Log("apt-get update")
	if _, err := command("", true, "apt-get", "update"); err != nil {
		t.Fatal(err)
	}
	aptUpdated = true
}

// ensureQEMU finds qemu-system-aarch64, installing Debian's
// qemu-system-arm if it is missing.
func ensureQEMU(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("qemu-system-aarch64"); err == nil {
		return p
	}
	t.Log("installing qemu-system-arm")
	install := func() error {
		_, err := command("", true, "apt-get", "install", "-y", "--no-install-recommends", "qemu-system-arm")
		return err
	}
	if err := install(); err != nil {
		aptUpdate(t)
		if err := install(); err != nil {
			t.Fatal(err)
		}
	}
	p, err := exec.LookPath("qemu-system-aarch64")
	if err != nil {
		t.Fatalf("qemu-system-arm is installed but: %v", err)
	}
	return p
}

// ensureKernel returns Debian's arm64 kernel image and the Pi 3B's device
// tree from the cache, downloading them first if the cache has none. The
// cache holds one directory per kernel release with just the two files.
func ensureKernel(t *testing.T, cache string) (kernel, dtb string) {
	t.Helper()
	if k, d, ok := cachedKernel(cache); ok {
		return k, d
	}
	archs, err := command("", false, "dpkg", "--print-foreign-architectures")
	if err != nil {
		t.Fatalf("this harness needs Debian's dpkg and apt: %v", err)
	}
	if !slices.Contains(strings.Fields(string(archs)), "arm64") {
		t.Log("dpkg --add-architecture arm64")
		if _, err := command("", true, "dpkg", "--add-architecture", "arm64"); err != nil {
			t.Fatal(err)
		}
		aptUpdate(t)
	}
	release, err := kernelRelease()
	if err != nil {
		aptUpdate(t)
		if release, err = kernelRelease(); err != nil {
			t.Fatal(err)
		}
	}
	tmp, err := os.MkdirTemp(cache, ".download-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	pkg := "linux-image-" + release + "-unsigned:arm64"
	t.Logf("apt-get download %s", pkg)
	if _, err := command(tmp, false, "apt-get", "download", pkg); err != nil {
		if aptUpdated {
			t.Fatal(err)
		}
		aptUpdate(t) // stale package lists: the release or its file is gone
		if release, err = kernelRelease(); err != nil {
			t.Fatal(err)
		}
		pkg = "linux-image-" + release + "-unsigned:arm64"
		t.Logf("apt-get download %s", pkg)
		if _, err := command(tmp, false, "apt-get", "download", pkg); err != nil {
			t.Fatal(err)
		}
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		t.Fatalf("apt-get download %s left %v", pkg, debs)
	}
	out := filepath.Join(tmp, release)
	if err := extractKernel(debs[0], out); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(cache, release)
	if err := os.Rename(out, dst); err != nil {
		if k, d, ok := cachedKernel(cache); ok { // another run won the race
			return k, d
		}
		t.Fatal(err)
	}
	return filepath.Join(dst, "vmlinuz"), filepath.Join(dst, dtbName)
}

// cachedKernel finds the most recently cached kernel.
func cachedKernel(cache string) (kernel, dtb string, ok bool) {
	dirs, _ := filepath.Glob(filepath.Join(cache, "*", "vmlinuz"))
	var newest time.Time
	for _, k := range dirs {
		d := filepath.Join(filepath.Dir(k), dtbName)
		ki, err1 := os.Stat(k)
		_, err2 := os.Stat(d)
		if err1 == nil && err2 == nil && ki.Size() > 0 && ki.ModTime().After(newest) {
			kernel, dtb, ok, newest = k, d, true, ki.ModTime()
		}
	}
	return kernel, dtb, ok
}

// kernelRelease asks apt which kernel Debian's linux-image-arm64
// metapackage depends on: "6.1.0-56-arm64".
func kernelRelease() (string, error) {
	out, err := command("", false, "apt-cache", "depends", "linux-image-arm64:arm64")
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`Depends: linux-image-(\d\S*-arm64)\b`).FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("apt-cache depends linux-image-arm64:arm64 names no kernel:\n%s", out)
	}
	return string(m[1]), nil
}

// extractKernel takes the kernel image and the Pi 3B's device tree out of
// the kernel package into dir, as vmlinuz and bcm2837-rpi-3-b.dtb. It
// streams the package's files (dpkg-deb --fsys-tarfile, the archive
// dpkg-deb -x would unpack) and keeps those two, rather than writing the
// package's few hundred megabytes of modules to disk.
func extractKernel(deb, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.Command("dpkg-deb", "--fsys-tarfile", deb)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	found := map[string]bool{}
	tr := tar.NewReader(pipe)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w", deb, err)
		}
		var name string
		switch {
		case h.Typeflag != tar.TypeReg:
		case strings.HasPrefix(h.Name, "./boot/vmlinuz-"):
			name = "vmlinuz"
		case strings.HasSuffix(h.Name, "/broadcom/"+dtbName):
			name = dtbName
		}
		if name == "" {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
		found[name] = true
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w\n%s", deb, err, stderr.Bytes())
	}
	if !found["vmlinuz"] || !found[dtbName] {
		return fmt.Errorf("%s holds no /boot/vmlinuz-* or broadcom/%s", deb, dtbName)
	}
	return nil
}

// buildInitrd cross-builds init and the guest (static: CGO_ENABLED=0) and
// packs them into a newc initramfs.
func buildInitrd(t *testing.T, root, dir, initrd string) {
	t.Helper()
	bins := map[string]string{
		"init":        "./hardware/rpi/qemutest/init",
		"lumen-guest": "./hardware/rpi/qemutest/guest",
	}
	files := map[string][]byte{}
	for name, pkg := range bins {
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	var buf bytes.Buffer
	c := NewCPIO(&buf)
	for _, d := range []string{"dev", "proc", "sys"} {
		_ = c.Dir(d, 0o755)
	}
	_ = c.CharDev("dev/console", 0o600, 5, 1)
	_ = c.File("init", 0o755, files["init"])
	_ = c.File("lumen-guest", 0o755, files["lumen-guest"])
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(initrd, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run is what one boot showed.
type run struct {
	err       error // QEMU failed, or the time limit passed
	serial    bytes.Buffer
	bootTime  time.Duration // QEMU start to "LQ init"
	guestTime time.Duration // "LQ init" to "LQ end"
	total     time.Duration
	verdict   string
	fails     []string
	got       Result
	played    []time.Duration
	playErr   error
	inputErr  error // playing InputTimeline
}

// boot runs QEMU until init says the guest ended, answering the guest's
// requests on the console: "idle?" sets the button released, "ready"
// plays the Timeline.
func boot(t *testing.T, qemu, kernel, dtb, initrd, sock string, limit time.Duration) *run {
	t.Helper()
	r := &run{}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu,
		"-M", "raspi3b", "-accel", "tcg,thread=single",
		"-kernel", kernel, "-dtb", dtb, "-initrd", initrd,
		"-display", "none", "-serial", "stdio", "-no-reboot",
		"-append", "console=ttyAMA0 iomem=relaxed",
		"-qtest", "unix:"+sock+",server=on,wait=off",
		// qtest logs every command to stderr by default, which shares
		// the console's pipe and can split a guest's line in two.
		"-qtest-log", "/dev/null")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.err = err
		return r
	}
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		waited <- err
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			lines <- strings.TrimRight(sc.Text(), "\r")
		}
		_, _ = io.Copy(io.Discard, pr)
	}()

	qt, err := dialQtest(sock, dialLimit)
	if err != nil {
		r.err = err
		_ = cmd.Process.Kill()
	} else {
		defer qt.Close()
		if err := qt.button(true); err != nil { // released, as the pull-up holds it
			r.err = err
		}
	}
	var initAt time.Time
	played := make(chan struct{})
	var playOnce sync.Once
	inputPlayed := make(chan struct{})
	var inputOnce sync.Once
	ended := false
	for line := range lines {
		r.serial.WriteString(line + "\n")
		i := strings.Index(line, Prefix)
		if i < 0 {
			if strings.Contains(line, "Kernel panic") {
				r.err = fmt.Errorf("the kernel panicked: %s", line)
				_ = cmd.Process.Kill()
			}
			continue
		}
		msg := strings.TrimSpace(line[i+len(Prefix):])
		if l, ok := ParseLED(msg); ok {
			r.got.LEDs = append(r.got.LEDs, l)
			continue
		}
		if kind, _, ok := ParseGesture(msg); ok {
			r.got.Gestures = append(r.got.Gestures, kind)
			continue
		}
		if kind, ok := ParseInput(msg); ok {
			r.got.Inputs = append(r.got.Inputs, kind)
			continue
		}
		switch {
		case msg == LineInit:
			initAt = time.Now()
			r.bootTime = initAt.Sub(start)
		case msg == LineIdle && qt != nil:
			if err := qt.button(true); err != nil {
				r.playErr = err
			}
		case msg == LineInputIdle && qt != nil:
			if err := qt.pin(InputPin, false); err != nil {
				r.playErr = err
			}
		case msg == LineInputReady && qt != nil:
			inputOnce.Do(func() {
				go func() {
					defer close(inputPlayed)
					if err := playInput(qt); err != nil {
						r.inputErr = err
					}
				}()
			})
		case msg == LineReady && qt != nil:
			playOnce.Do(func() {
				go func() {
					defer close(played)
					r.played, r.playErr = play(qt)
				}()
			})
		case strings.HasPrefix(msg, "check FAIL "):
			r.fails = append(r.fails, strings.TrimPrefix(msg, "check FAIL "))
		case strings.HasPrefix(msg, Verdict+" "):
			r.verdict = strings.TrimPrefix(msg, Verdict+" ")
		case msg == LineEnd || strings.HasPrefix(msg, LineEnd+" "):
			if !initAt.IsZero() {
				r.guestTime = time.Since(initAt)
			}
			ended = true
			_ = cmd.Process.Kill() // raspi3b models no power-off
		}
	}
	werr := <-waited
	r.total = time.Since(start)
	playOnce.Do(func() { close(played) })
	<-played
	inputOnce.Do(func() { close(inputPlayed) })
	<-inputPlayed
	switch {
	case ctx.Err() != nil:
		r.err = fmt.Errorf("no end after %v (the hard time limit; LUMEN_QEMU_TIMEOUT sets it)", limit)
	case r.err == nil && !ended:
		r.err = fmt.Errorf("QEMU exited before the guest ended: %v", werr)
	}
	return r
}

// play drives the Timeline on the button pin and returns when each edge
// was actually written, from the first.
func play(qt *qtest) ([]time.Duration, error) {
	var at []time.Duration
	start := time.Now()
	for _, e := range Timeline() {
		time.Sleep(time.Until(start.Add(e.At)))
		at = append(at, time.Since(start).Round(time.Millisecond))
		if err := qt.button(!e.Down); err != nil { // pressed = low
			return at, err
		}
	}
	return at, nil
}

// qtest is a client of QEMU's qtest protocol: one command per line, one
// "OK ..." line back.
type qtest struct {
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

func dialQtest(sock string, limit time.Duration) (*qtest, error) {
	end := time.Now().Add(limit)
	for {
		conn, err := net.Dial("unix", sock)
		if err == nil {
			return &qtest{conn: conn, r: bufio.NewReader(conn)}, nil
		}
		if time.Now().After(end) {
			return nil, fmt.Errorf("qtest socket %s: %w", sock, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (q *qtest) Close() error { return q.conn.Close() }

func (q *qtest) do(cmd string) (string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	_ = q.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(q.conn, cmd+"\n"); err != nil {
		return "", fmt.Errorf("qtest %q: %w", cmd, err)
	}
	reply, err := q.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("qtest %q: %w", cmd, err)
	}
	reply = strings.TrimSpace(reply)
	if reply != "OK" && !strings.HasPrefix(reply, "OK ") {
		return reply, fmt.Errorf("qtest %q: %s", cmd, reply)
	}
	return reply, nil
}

// button sets the button pin's level: high (released) through GPSET0, low
// (pressed) through GPCLR0. QEMU's GPIO keeps the level of an input pin as
// written, which is how a press reaches the driver's polling.
func (q *qtest) button(high bool) error {
	reg := gpclr0
	if high {
		reg = gpset0
	}
	_, err := q.do(fmt.Sprintf("writel 0x%x 0x%x", reg, uint32(1)<<Config().Button.Pin))
	return err
}

// pin sets an input pin's level through GPSET0/GPCLR0, as a sensor
// driving the line would.
func (q *qtest) pin(pin int, high bool) error {
	reg := gpclr0
	if high {
		reg = gpset0
	}
	_, err := q.do(fmt.Sprintf("writel 0x%x 0x%x", reg, uint32(1)<<pin))
	return err
}

// playInput drives InputTimeline on InputPin.
func playInput(qt *qtest) error {
	start := time.Now()
	for _, l := range InputTimeline {
		time.Sleep(time.Until(start.Add(l.At)))
		if err := qt.pin(InputPin, l.High); err != nil {
			return err
		}
	}
	return nil
}
