// Package signalfs owns job-signal's on-disk protocol: the files that
// job-signal (wrapping a Job's main command) and sidecar-watch (wrapping each
// sidecar) exchange through a directory they share, usually an emptyDir.
//
// # Files
//
// All files live directly in the directory. Names are fixed, apart from the
// sidecar's name, which is a DNS label and so can hold neither "/" nor ".".
//
//	job.state            written by job-signal at start, when COMMAND starts,
//	                     and when it ends (the done marker).
//	job.lock             created by job-signal, which holds an exclusive
//	                     flock(2) on it for its whole life. Holds the
//	                     restart policy (see Rules), or nothing when it
//	                     was made in a full directory.
//	sidecar-NAME.state   written by the sidecar-watch with --name NAME at
//	                     every change of its phase.
//	sidecar-NAME.lock    created by that sidecar-watch, which holds an
//	                     exclusive flock(2) on it for its whole life. Empty.
//	#INODE               not an entry: inotify's name for a file made with
//	                     O_TMPFILE, before it is linked as job.lock.
//	.job.tmp/,           each writer's private directory (0700) for the
//	.sidecar-NAME.tmp/   temporary files of its atomic writes; readers
//	                     ignore every name that starts with a dot.
//
// Each state file has one writer. Readers never write another party's file.
//
// # Format
//
// A state file is UTF-8 text, at most 4096 bytes, one item per line, each
// line ending in "\n". The first line names the protocol version and the
// kind of file; every other line is key=value:
//
//	job-signal v1 job
//	attempt=1
//	phase=done
//	restart-policy=Never
//	liveness=flock
//	version=v0.1.0
//	pid=1
//	child-pid=7
//	wait-for=proxy
//	started=2026-11-22T10:00:00.1Z
//	updated=2026-11-22T10:00:09.3Z
//	exit-code=0
//	reason=exited
//
// Keys are lower-case letters, digits and "-"; a key appears at most once;
// values hold no control characters and are at most 1024 bytes. Empty values
// are left out. Lists are comma-separated. Times are RFC 3339 in UTC.
// Readers ignore keys they do not know, so later v1 writers may add keys.
// Anything else (a missing final newline, a bad header, a repeated key, a
// value out of range, a missing required key) is rejected with an error that
// says what is wrong; the parser is fuzzed.
//
// job.state keys: attempt (required, from 1), phase (required: waiting,
// running, done), restart-policy (required: Never, OnFailure), liveness
// (flock or none), version (job-signal's, for status), pid, child-pid,
// wait-for, started, updated; when phase is done also exit-code (required,
// 0-255), reason (required: exited, signaled, not-found, not-executable,
// ready-timeout, sidecar-failed, interrupted, error), signal, terminating
// (true when job-signal was told to stop, for people: see Attempts) and
// message.
//
// sidecar-NAME.state keys: name (required, equal to NAME), phase (required:
// waiting, starting, ready, restarting, stopping, stopped, failed),
// liveness (flock or none), version (sidecar-watch's), pid,
// child-pid, restarts, after, stop-after, exit-code (the command's last
// exit), terminating (true when it stopped because the Pod is terminating),
// last-error (the last readiness failure or exit, for people and for
// job-signal's ready-timeout error), updated.
//
// job.lock's content is "job-signal v1 lock" and restart-policy=, the
// policy job-signal was given: what sidecars go by when it died before
// writing job.state.
//
// # Rules
//
// Files are created readable by all and writable by their writer only
// (0644): containers of one Pod may run as different users, and nothing in
// them is secret. A directory job-signal or sidecar-watch creates, and
// every parent of it that they create, is 0770 whatever the umask.
//
// The directory is opened once, walking its path one component at a time
// with O_NOFOLLOW, and every file operation is relative to that handle.
// The directory itself is never a symlink; a symlink on the way is followed
// only where nobody but its directory's owner could have made it (not in a
// group- or world-writable directory such as an emptyDir). See openDir.
//
// Structured values (names, numbers) are never cut short; a state that
// would not fit is not written. Free text (message, last-error) is cut to
// the value limit.
//
// Writes are atomic: the content goes to a temporary file in the writer's
// private subdirectory, which is then renamed over the target, so a reader
// sees the old content or the new, never a mix. Since inotify does not look
// into subdirectories, each write is one event (the rename) for watchers.
// There is no fsync: an emptyDir does not outlive its node, so durability
// across a power cut buys nothing, and fsync costs milliseconds on
// disk-backed volumes.
//
// Reads never follow symlinks (O_NOFOLLOW), never block on FIFOs, and refuse
// anything that is not a regular file of at most 4096 bytes.
//
// A watcher sets its inotify watch first and scans second, and after that
// re-reads the files it cares about on every event, so a marker written
// before the watcher started is honoured and an event and a scan never
// disagree. Where inotify is unavailable it polls, and says so in its log.
// It also watches the parent directory for the directory's own name: the
// kernel reports a removed directory only once nothing holds it open, and
// lock files do. A watcher whose directory was replaced says so, and the
// programs carry on in the directory now at the path.
//
// Liveness. job-signal makes job.lock before any other entry: the file is
// made without a name (O_TMPFILE), written, locked, then linked into place,
// so nobody ever sees it unlocked while its creator lives, and a job-signal
// killed before its first entry looks exactly like one that never ran.
// It keeps the lock until after it wrote the done marker. A reader that
// sees a job.state that is not done and then finds job.lock free, reads
// job.state again (done may have been written in between); if it is still
// not done, job-signal died without writing done (SIGKILL, OOM kill) and
// the attempt failed with an unknown code. Sidecars wait for the lock with
// a blocking shared flock, so waiting costs nothing, and drop it at once.
// A lock held exclusively is another writer: a second job-signal, or a
// second sidecar-watch of one name, is refused at once. Where flock is not
// honoured (some network and FUSE filesystems accept a lock without
// enforcing it), job-signal detects it at start and writes liveness=none;
// sidecars then do not rely on the lock, and a killed job-signal is not
// detected.
//
// Each sidecar-watch likewise holds sidecar-NAME.lock. Dir.Sidecar is the
// one reading of a sidecar's state and lock: missing, unreadable, pending,
// ready, stopping, dead (its state is not stopped or failed but its lock
// is free: it died with its container), stopped or failed. The ready gate
// does not count a dead sidecar as ready, and --stop-after does not wait
// for it (it waits on its lock, so a death is noticed at once).
//
// A full directory. A job-signal writes the done marker of a success ahead
// of time, at start, and if the real one cannot be written when COMMAND
// exits 0 (no space left), renames the one written ahead into place: a
// rename needs no free space. A job.lock made in a full directory has no
// content; sidecars take the death of such a job-signal as final.
//
// A job-signal that fails on its usage, before COMMAND could run, still
// writes a done marker (reason=error, exit code 2, restart-policy Never,
// since the failure repeats on every restart) if the directory exists, so
// the sidecars stop instead of waiting for a job that never starts. A
// sidecar-watch that fails on its usage records itself failed likewise.
//
// # Attempts
//
// Under restartPolicy OnFailure the kubelet restarts a failed main container
// in the same Pod, so the directory outlives an attempt. Each job-signal
// start writes job.state with attempt set to the previous attempt plus one,
// replacing the previous done marker in the same atomic write, so a stale
// done marker can never be taken for the current attempt. A failed attempt
// under OnFailure is not final: sidecars keep running for the next one.
// Only a sidecar-watch's own TERM (a Pod deletion signals every container)
// makes it final; a TERM that reached job-signal alone (a failed liveness
// probe, after which the kubelet restarts the container) does not, whatever
// job.state's terminating says.
//
// # Versions
//
// ProtocolVersion is 1. A reader accepts every version up to its own, so a
// newer binary reads an older directory; a file from a newer version is
// rejected with an error saying to upgrade both binaries together.
package signalfs

// ProtocolVersion is the version this package writes and the highest it
// reads.
const ProtocolVersion = 1

// magic starts the first line of every state file.
const magic = "job-signal"
