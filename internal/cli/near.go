package cli

// Nearest returns the candidate closest to word by edit distance, if it is
// at most 2 edits away (and word is not itself a candidate): the rule for
// "did you mean" hints.
func Nearest(word string, candidates []string) (string, bool) {
	best, bestDist := "", 3
	for _, c := range candidates {
		if c == word {
			return "", false
		}
		if d := editDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (names and commands here are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
