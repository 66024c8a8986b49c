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
	lock, err := d.LockJob(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !lock.Honoured {
		t.Fatal("flock not honoured on the test filesystem")
	}
	if held, err := d.JobLockHeld(); !held || err != nil {
		t.Fatalf("while locked: held=%v err=%v", held, err)
	}
	// A second job-signal on the same directory is refused.
	if _, err := d.LockJob(context.Background(), 20*time.Millisecond); err == nil || !strings.Contains(err.Error(), "another job-signal") {
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
	lock2, err := d.LockJob(context.Background(), time.Second)
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
