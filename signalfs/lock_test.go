package signalfs

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestJobLock(t *testing.T) {
	d := openTemp(t)
	if held, err := d.JobLockHeld(); held || err != nil {
		t.Fatalf("before any job-signal: held=%v err=%v", held, err)
	}
	lock, err := d.LockJob(context.Background(), time.Second, RestartOnFailure)
	if err != nil {
		t.Fatal(err)
	}
	if !lock.Honoured {
		t.Fatal("flock not honoured on the test filesystem")
	}
	if held, err := d.JobLockHeld(); !held || err != nil {
		t.Fatalf("while locked: held=%v err=%v", held, err)
	}
	if p := d.JobLockRestartPolicy(); p != RestartOnFailure {
		t.Errorf("restart policy in job.lock: %q", p)
	}
	// A second job-signal on the same directory is refused.
	if _, err := d.LockJob(context.Background(), 20*time.Millisecond, RestartNever); err == nil || !strings.Contains(err.Error(), "another job-signal") {
		t.Fatalf("second lock: got %v", err)
	}
	free := d.WaitJobLockFree()
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
	if held, _ := d.JobLockHeld(); held {
		t.Fatal("held after release")
	}
	// The waiter dropped its shared lock: a new attempt can lock at once.
	lock2, err := d.LockJob(context.Background(), time.Second, RestartOnFailure)
	if err != nil {
		t.Fatal(err)
	}
	lock2.Release()
}

func TestWaitJobLockFreeWithoutLockFile(t *testing.T) {
	d := openTemp(t)
	select {
	case err := <-d.WaitJobLockFree():
		if err == nil {
			t.Fatal("want an error: no lock file")
		}
	case <-time.After(waitLimit):
		t.Fatal("blocked without a lock file")
	}
}

// The lock file appears already locked: there is no moment when it exists,
// unlocked, while its creator lives (a reader would take that for death).
func TestJobLockCreatedLocked(t *testing.T) {
	for i := 0; i < 200; i++ {
		d := openTemp(t)
		created := make(chan struct{})
		go func() {
			defer close(created)
			lock, err := d.LockJob(context.Background(), time.Second, RestartNever)
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { lock.Release() })
		}()
		for {
			if d.JobLockExists() {
				if held, err := d.JobLockHeld(); err != nil || !held {
					t.Fatalf("job.lock seen unlocked while its creator lives (held=%v, err=%v)", held, err)
				}
				break
			}
			select {
			case <-created:
			default:
				continue
			}
			if !d.JobLockExists() {
				t.Fatal("LockJob returned without creating job.lock")
			}
		}
		<-created
	}
}

func TestSidecarLock(t *testing.T) {
	d := openTemp(t)
	s := SidecarState{Name: "proxy", Phase: SidecarReady, Liveness: LivenessFlock}
	if d.SidecarAlive(s) {
		t.Fatal("alive before any lock")
	}
	lock, err := d.LockSidecar(context.Background(), "proxy", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !d.SidecarAlive(s) {
		t.Fatal("not alive while locked")
	}
	if _, err := d.LockSidecar(context.Background(), "proxy", 20*time.Millisecond); err == nil {
		t.Fatal("a second sidecar-watch with the same name was allowed")
	}
	lock.Release()
	if d.SidecarAlive(s) {
		t.Fatal("alive after release")
	}
	s.Liveness = LivenessNone
	if !d.SidecarAlive(s) {
		t.Fatal("without a honoured lock, liveness cannot be known: must say alive")
	}
}
