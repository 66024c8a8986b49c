package signalfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func openTemp(t *testing.T) *Dir {
	t.Helper()
	d, err := Open(filepath.Join(t.TempDir(), "signal"), true)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestOpen(t *testing.T) {
	base := t.TempDir()
	if _, err := Open(filepath.Join(base, "missing"), false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing without create: got %v", err)
	}
	d, err := Open(filepath.Join(base, "a", "b"), true)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(d.Path()); err != nil || info.Mode().Perm() != dirPerm {
		t.Errorf("created directory: %v %v", info.Mode(), err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := Open(file, true); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file as directory: got %v", err)
	}
}

func TestReadMissing(t *testing.T) {
	d := openTemp(t)
	if _, found, err := d.ReadJob(); found || err != nil {
		t.Errorf("ReadJob on empty dir: found=%v err=%v", found, err)
	}
	if _, found, err := d.ReadSidecar("proxy"); found || err != nil {
		t.Errorf("ReadSidecar on empty dir: found=%v err=%v", found, err)
	}
}

func TestWriteReadAndPermissions(t *testing.T) {
	d := openTemp(t)
	want := SidecarState{Name: "proxy", Phase: SidecarReady, ExitCode: -1, Updated: t0}
	if err := d.WriteSidecar(want); err != nil {
		t.Fatal(err)
	}
	got, found, err := d.ReadSidecar("proxy")
	if err != nil || !found || got.Phase != SidecarReady {
		t.Fatalf("got %+v found=%v err=%v", got, found, err)
	}
	info, err := os.Stat(filepath.Join(d.Path(), SidecarStateFile("proxy")))
	if err != nil || info.Mode().Perm() != filePerm {
		t.Errorf("marker mode %v (%v), want %v", info.Mode(), err, os.FileMode(filePerm))
	}
	names, err := d.SidecarNames()
	if err != nil || len(names) != 1 || names[0] != "proxy" {
		t.Errorf("SidecarNames = %v, %v", names, err)
	}
	// No temporary files are left behind: only the writer's private
	// directory, empty.
	entries, _ := os.ReadDir(d.Path())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != ".sidecar-proxy.tmp" {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	if left, err := os.ReadDir(filepath.Join(d.Path(), ".sidecar-proxy.tmp")); err != nil || len(left) != 0 {
		t.Errorf("private directory: %v, %v", left, err)
	}
	if info, err := os.Stat(filepath.Join(d.Path(), ".sidecar-proxy.tmp")); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("private directory mode: %v %v", info, err)
	}
}

// A reader racing a writer sees either complete version, never a mix or a
// truncated file.
func TestAtomicWriteConcurrentReader(t *testing.T) {
	d := openTemp(t)
	short := JobState{Attempt: 1, Phase: JobRunning, RestartPolicy: RestartNever}
	long := JobState{Attempt: 2, Phase: JobDone, RestartPolicy: RestartNever, ExitCode: 7, Reason: ReasonExited,
		Message: strings.Repeat("long message ", 60)}
	if err := d.WriteJob(short); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			s := short
			if i%2 == 1 {
				s = long
			}
			if err := d.WriteJob(s); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	reads := 0
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline) || reads < 1000; reads++ {
		got, found, err := d.ReadJob()
		if err != nil || !found {
			t.Fatalf("read %d: found=%v err=%v", reads, found, err)
		}
		if got.Attempt == 1 && got.Message != "" || got.Attempt == 2 && got.Message != long.Message {
			t.Fatalf("read %d: a mix of versions: %+v", reads, got)
		}
	}
	cancel()
	wg.Wait()
}

func TestReadRefusesSymlink(t *testing.T) {
	d := openTemp(t)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte(goodJob), 0o600)
	if err := os.Symlink(secret, filepath.Join(d.Path(), JobStateFile)); err != nil {
		t.Fatal(err)
	}
	_, _, err := d.ReadJob()
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("got %v, want a symlink error", err)
	}
	// Writing replaces the link itself; the target is untouched.
	if err := d.WriteJob(JobState{Attempt: 5, Phase: JobWaiting, RestartPolicy: RestartNever}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(secret); string(data) != goodJob {
		t.Errorf("write went through the symlink: %q", data)
	}
	if s, _, err := d.ReadJob(); err != nil || s.Attempt != 5 {
		t.Errorf("after replacing the link: %+v %v", s, err)
	}
}

func TestReadRefusesNonRegular(t *testing.T) {
	d := openTemp(t)
	if err := syscall.Mkfifo(filepath.Join(d.Path(), JobStateFile), 0o600); err != nil {
		t.Fatal(err)
	}
	// Must return at once, not block waiting for a FIFO writer.
	_, _, err := d.ReadJob()
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("FIFO: got %v", err)
	}
	os.Mkdir(filepath.Join(d.Path(), SidecarStateFile("x")), 0o700)
	if _, _, err := d.ReadSidecar("x"); err == nil {
		t.Fatal("directory as marker: want an error")
	}
}

func TestReadRefusesHuge(t *testing.T) {
	d := openTemp(t)
	huge := goodJob + "message=" + strings.Repeat("x", 1<<20) + "\n"
	os.WriteFile(filepath.Join(d.Path(), JobStateFile), []byte(huge), 0o600)
	_, _, err := d.ReadJob()
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("got %v, want ErrMalformed", err)
	}
}

func TestReadSidecarNameMismatch(t *testing.T) {
	d := openTemp(t)
	data, _ := SidecarState{Name: "other", Phase: SidecarReady}.MarshalText()
	os.WriteFile(filepath.Join(d.Path(), SidecarStateFile("proxy")), data, 0o600)
	if _, found, err := d.ReadSidecar("proxy"); found || !errors.Is(err, ErrMalformed) {
		t.Fatalf("found=%v err=%v, want ErrMalformed", found, err)
	}
}

func TestWriteToReadOnlyDirectory(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	d := openTemp(t)
	os.Chmod(d.Path(), 0o500)
	defer os.Chmod(d.Path(), 0o700)
	err := d.WriteJob(JobState{Attempt: 1, Phase: JobWaiting, RestartPolicy: RestartNever})
	if !errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), d.Path()) {
		t.Fatalf("got %v, want a permission error naming the directory", err)
	}
}
