package job

import "testing"

func TestFormatIndexes(t *testing.T) {
	for _, tc := range []struct {
		set  []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1, 2}, "0-2"},
		{[]int{5, 0, 2, 3, 7, 8}, "0,2-3,5,7-8"},
	} {
		set := map[int]bool{}
		for _, i := range tc.set {
			set[i] = true
		}
		if got := formatIndexes(set); got != tc.want {
			t.Errorf("formatIndexes(%v) = %q, want %q", tc.set, got, tc.want)
		}
	}
}
