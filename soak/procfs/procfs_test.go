package procfs

import (
	"os"
	"testing"
)

func TestParseStatOddCommandName(t *testing.T) {
	// A command name may hold spaces and parentheses; only the last ")"
	// ends it.
	line := "4128 (a) b (c) Z 1 4123 3413 0 -1 4227084 97 0 1 0 0 0 0 0 20 0 1 0 286255 0 0\n"
	st, err := parseStat(4128, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.State != 'Z' || st.PPID != 1 || st.StartTime != 286255 || !st.Zombie() {
		t.Errorf("got %+v", st)
	}
}

func TestSelf(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != os.Getppid() || !Running(st.PID, st.StartTime) || Running(st.PID, st.StartTime+1) {
		t.Errorf("ReadStat(self) = %+v", st)
	}
}
