package signalfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestJobLock(t *testing.T) {
	d := openTemp(t)
	if st, err := d.lockState(JobLockFile); st != LockAbsent || err != nil {
		t.Fatalf("before any job-signal: %v, %v", st, err)
	}
	lock, err := d.LockJob(RestartOnFailure)
	if err != nil {
		t.Fatal(err)
	}
	if !lock.Honoured {
		t.Fatal("flock not honoured on the test filesystem")
	}
	if st, err := d.lockState(JobLockFile); st != LockHeld || err != nil {
		t.Fatalf("while locked: %v, %v", st, err)
	}
	if p := d.jobLockPolicy(); p != RestartOnFailure {
		t.Errorf("restart policy in job.lock: %q", p)
	}
	// A second job-signal on the same directory is refused at once,
	// naming the holder.
	d.WriteJob(JobState{Attempt: 3, Phase: JobRunning, PID: 4242, RestartPolicy: RestartOnFailure, Started: time.Now()})
	start := time.Now()
	_, err = d.LockJob(RestartNever)
	if !errors.Is(err, ErrLockHeld) || !strings.Contains(err.Error(), "job-signal pid 4242") || !strings.Contains(err.Error(), "attempt 3") {
		t.Fatalf("second lock: got %v", err)
	}
	if took := time.Since(start); took > readersGone/2 {
		t.Errorf("a lock held exclusively took %s to refuse; it should not wait for readers", took)
	}
	free := d.WaitLockFree(JobLockFile)
	select {
	case err := <-free:
		t.Fatalf("lock reported free while held: %v", err)
	default:
	}
	// Closing the descriptor is what process death does.
	lock.Release()
	select {
	case err := <-free:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitLimit):
		t.Fatal("release not noticed")
	}
	if st, _ := d.lockState(JobLockFile); st != LockFree {
		t.Fatalf("after release: %v", st)
	}
	// The waiter dropped its shared lock: a new attempt can lock at once.
	lock2, err := d.LockJob(RestartOnFailure)
	if err != nil {
		t.Fatal(err)
	}
	lock2.Release()
}

// A reader's brief shared lock does not make a new holder fail.
func TestLockWaitsForReaders(t *testing.T) {
	d := openTemp(t)
	first, err := d.LockJob(RestartNever)
	if err != nil {
		t.Fatal(err)
	}
	first.Release()
	reader, err := d.openFile(JobLockFile, os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	if err := flock(reader, 1 /* LOCK_SH */); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, func() { reader.Close() })
	lock, err := d.LockJob(RestartNever)
	if err != nil {
		t.Fatalf("lock beside a reader's shared lock: %v", err)
	}
	lock.Release()
}

func TestWaitLockFreeWithoutLockFile(t *testing.T) {
	d := openTemp(t)
	select {
	case err := <-d.WaitLockFree(JobLockFile):
		if err != nil {
			t.Fatalf("no lock file means nobody holds it: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("blocked without a lock file")
	}
}

// The lock file appears already locked: there is no moment when it exists,
// unlocked, while its creator lives (a reader would take that for death).
// And it is the creator's first entry in the directory.
func TestJobLockCreatedLocked(t *testing.T) {
	for i := 0; i < 200; i++ {
		d := openTemp(t)
		created := make(chan struct{})
		go func() {
			defer close(created)
			lock, err := d.LockJob(RestartNever)
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { lock.Release() })
		}()
		for finished := false; ; {
			entries, _ := os.ReadDir(d.Path())
			if len(entries) > 0 {
				if len(entries) != 1 || entries[0].Name() != JobLockFile {
					t.Fatalf("first entries %v: want job.lock alone", entries)
				}
				if st, err := d.lockState(JobLockFile); err != nil || st != LockHeld {
					t.Fatalf("job.lock seen unlocked while its creator lives (%v, %v)", st, err)
				}
				break
			}
			if finished {
				t.Fatal("LockJob returned without creating job.lock")
			}
			select {
			case <-created:
				finished = true // look once more
			default:
			}
		}
		<-created
	}
}

func TestSidecarLock(t *testing.T) {
	d := openTemp(t)
	lock, err := d.LockSidecar("proxy")
	if err != nil {
		t.Fatal(err)
	}
	d.WriteSidecar(SidecarState{Name: "proxy", Phase: SidecarReady, PID: 77, Liveness: LivenessFlock, ExitCode: -1})
	if _, err := d.LockSidecar("proxy"); !errors.Is(err, ErrLockHeld) || !strings.Contains(err.Error(), "sidecar-watch pid 77") {
		t.Fatalf("a second sidecar-watch with the same name: %v", err)
	}
	free := d.WaitLockFree(SidecarLockFile("proxy"))
	lock.Release()
	select {
	case <-free:
	case <-time.After(waitLimit):
		t.Fatal("release not noticed")
	}
}

// In a directory with no room left, job.lock is still made and locked,
// without its content: sidecars then take the job-signal's death as final.
func TestJobLockInFullDirectory(t *testing.T) {
	dir := fullTmpfs(t)
	d, err := Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	lock, err := d.LockJob(RestartOnFailure)
	if err != nil {
		t.Fatalf("lock in a full directory: %v", err)
	}
	defer lock.Release()
	if p := d.jobLockPolicy(); p != "" {
		t.Errorf("policy %q read from a lock that could not hold it", p)
	}
	if err := d.WriteJob(JobState{Attempt: 1, Phase: JobWaiting, RestartPolicy: RestartNever}); err == nil {
		t.Fatal("the directory is not full after all")
	}
}

// fullTmpfs mounts a small tmpfs in a private mount namespace... which a
// test process cannot enter alone; instead it needs root and unmounts at
// the end.
func fullTmpfs(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a size-limited tmpfs")
	}
	dir := t.TempDir()
	if err := mountTmpfs(dir, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unmount(dir) })
	hog, err := os.Create(filepath.Join(dir, "hog"))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := hog.Write(buf); err != nil {
			break
		}
	}
	hog.Close()
	return dir
}

// TestLockLiveness: the state files say flock only of a lock the
// filesystem enforces.
func TestLockLiveness(t *testing.T) {
	if got := (&Lock{Honoured: true}).Liveness(); got != LivenessFlock {
		t.Errorf("honoured lock: liveness %q, want %q", got, LivenessFlock)
	}
	if got := (&Lock{Honoured: false}).Liveness(); got != LivenessNone {
		t.Errorf("unenforced lock: liveness %q, want %q", got, LivenessNone)
	}
}
