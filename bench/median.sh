# bench/median.sh - sourced by the benchmarks that report a median of runs.
# median [VALUE...]: the median of the arguments, or of stdin's lines if none
# (the lower middle one of an even count).
median() {
	if [ $# -gt 0 ]; then printf '%s\n' "$@"; else cat; fi |
		sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'
}
