package signalfs

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestOpenRefusesSymlinkedDir(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "elsewhere")
	os.Mkdir(target, 0o755)
	os.Symlink(target, filepath.Join(base, "signal"))
	if _, err := Open(filepath.Join(base, "signal"), true); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Fatalf("Open through a symlink at --dir: %v", err)
	}
	// A link on the way, in a directory others can write (a shared
	// volume), is refused too.
	shared := filepath.Join(base, "shared")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o1777)
	os.Symlink(target, filepath.Join(shared, "a"))
	if _, err := Open(filepath.Join(shared, "a", "sub"), true); err == nil || !strings.Contains(err.Error(), "others can write") {
		t.Fatalf("Open through a planted link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(target, "sub")); err == nil {
		t.Fatal("a directory was made through the planted link")
	}
	// An administrator's link, in a directory only its owner writes, is
	// followed (as /var/run -> /run).
	private := filepath.Join(base, "private")
	os.Mkdir(private, 0o755)
	os.Symlink(target, filepath.Join(private, "run"))
	d, err := Open(filepath.Join(private, "run", "sub"), true)
	if err != nil {
		t.Fatalf("Open through an administrator's link: %v", err)
	}
	d.Close()
	if info, err := os.Stat(filepath.Join(target, "sub")); err != nil || !info.IsDir() {
		t.Fatalf("the directory was not made at the link's target: %v", err)
	}
}

// Parents made for --dir a/b are group-usable whatever the umask.
func TestOpenCreatesGroupUsableParents(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	base := t.TempDir()
	d, err := Open(filepath.Join(base, "a", "b"), true)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, p := range []string{"a", "a/b"} {
		info, err := os.Stat(filepath.Join(base, p))
		if err != nil || info.Mode().Perm() != dirPerm {
			t.Errorf("%s: mode %v, %v; want %o", p, info.Mode().Perm(), err, dirPerm)
		}
	}
}

// A racer swaps the directory being made for a symlink to a file outside:
// the file's mode never changes (the chmod goes through the directory's own
// handle), and Open either succeeds on a real directory or fails.
func TestOpenRacedBySymlinkSwap(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("x"), 0o600)
	for i := 0; i < 300; i++ {
		path := filepath.Join(base, "sub")
		os.RemoveAll(path)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if os.Remove(path) == nil {
					os.Symlink(outside, path)
					return
				}
			}
		}()
		d, err := Open(path, true)
		wg.Wait()
		if err == nil {
			if info, err := os.Lstat(path); err == nil && info.Mode()&os.ModeSymlink != 0 && !d.Replaced() {
				t.Fatal("Open returned a directory that a symlink now replaces, yet Replaced is false")
			}
			d.Close()
		}
		if info, _ := os.Stat(outside); info.Mode().Perm() != 0o600 {
			t.Fatalf("round %d: the file outside became %v", i, info.Mode().Perm())
		}
	}
}

func TestReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "signal")
	d, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Replaced() {
		t.Fatal("replaced at once")
	}
	lock, _ := d.LockSidecar("proxy") // held open, as sidecar-watch does
	defer lock.Release()
	os.RemoveAll(path)
	if !d.Replaced() {
		t.Fatal("removed, not noticed")
	}
	os.Mkdir(path, 0o770)
	if !d.Replaced() {
		t.Fatal("made again, not noticed")
	}
}

// A marker reserved ahead is put in place by a rename when the directory
// has no room left for a write.
func TestReserveCommitsInFullDirectory(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a size-limited tmpfs")
	}
	if err := mountTmpfs(dir, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	defer unmount(dir)
	d, err := Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	success := JobState{Attempt: 1, Phase: JobDone, RestartPolicy: RestartOnFailure, Reason: ReasonExited}
	r, err := d.ReserveJob(success)
	if err != nil {
		t.Fatal(err)
	}
	hog, _ := os.Create(filepath.Join(dir, "hog"))
	for buf := make([]byte, 4096); ; {
		if _, err := hog.Write(buf); err != nil {
			break
		}
	}
	hog.Close()
	if err := d.WriteJob(success); err == nil {
		t.Fatal("the directory is not full")
	}
	if err := r.Commit(); err != nil {
		t.Fatalf("commit in a full directory: %v", err)
	}
	got, found, err := d.ReadJob()
	if err != nil || !found || got.Phase != JobDone || got.ExitCode != 0 {
		t.Fatalf("after commit: %+v, %v, %v", got, found, err)
	}
}
