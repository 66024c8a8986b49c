package signalfs

import (
	"testing"
	"time"
)

func BenchmarkWriteJob(b *testing.B) {
	d, err := Open(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	s := JobState{Attempt: 1, Phase: JobDone, RestartPolicy: RestartNever, Liveness: LivenessFlock, PID: 1, ChildPID: 7,
		ExitCode: 0, Reason: ReasonExited, Started: time.Now(), Updated: time.Now()}
	for b.Loop() {
		if err := d.WriteJob(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadJob(b *testing.B) {
	d, err := Open(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	d.WriteJob(JobState{Attempt: 1, Phase: JobDone, RestartPolicy: RestartNever, Reason: ReasonExited, Updated: time.Now()})
	for b.Loop() {
		if _, _, err := d.ReadJob(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseJob(b *testing.B) {
	data, _ := JobState{Attempt: 1, Phase: JobDone, RestartPolicy: RestartNever, Liveness: LivenessFlock, PID: 1,
		WaitFor: []string{"proxy", "db"}, Reason: ReasonExited, Started: time.Now(), Updated: time.Now()}.MarshalText()
	for b.Loop() {
		var s JobState
		if err := s.UnmarshalText(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteToNotice is a write of job.state to the watcher reporting
// it, in one process: the file-system part of the stop latency.
func BenchmarkWriteToNotice(b *testing.B) {
	d, err := Open(b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	w := d.Watch(WatchOptions{Files: []string{JobStateFile}})
	defer w.Close()
	<-w.C
	s := JobState{Attempt: 1, Phase: JobRunning, RestartPolicy: RestartNever}
	for b.Loop() {
		if err := d.WriteJob(s); err != nil {
			b.Fatal(err)
		}
		<-w.C
	}
}
