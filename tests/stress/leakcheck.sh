# tests/stress/leakcheck.sh - leak checks shared by load.sh, faults.sh and
# hostile.sh (sourced after tests/e2e/lib.sh and e2e_start).
#
# The launcher keeps `prewarm` sandboxes per profile built ahead of time,
# each waiting (as the sandbox's own init, still named "sharnessd", and its
# file actor, "sharness-actor") under its own uid and run cgroup.  Those are
# not leaks; anything else is:
#   leaked_procs     processes of the uid range (above the front's uid) that
#                    are not a waiting sandbox, plus waiters or actors beyond
#                    the pool size
#   leaked_cgroups   run-UID cgroups whose uid has no waiting sandbox
#   uid_procs UID    processes of one uid
#   cmd_uid COMM     the uid of a process named COMM in the range (a running run)
pool_size() {
	local per nprof
	per=$(jq -r '.prewarm // 1' "$T/sharnessd.json")
	nprof=$(ls "$T"/profiles/*.json 2>/dev/null | wc -l)
	echo $((per * nprof))
}
range_ps() { ps -eo uid=,pid=,comm= | awk -v f="$UID_FIRST" '$1 > f && $1 < f + 4096'; }
waiter_uids() { range_ps | awk '$3 == "sharnessd" {print $1}' | sort -u; }
leaked_procs() {
	local others waiters actors pool
	others=$(range_ps | awk '$3 != "sharnessd" && $3 != "sharness-actor"' | wc -l)
	waiters=$(range_ps | awk '$3 == "sharnessd"' | wc -l)
	actors=$(range_ps | awk '$3 == "sharness-actor"' | wc -l)
	pool=$(pool_size)
	echo $((others + (waiters > pool ? waiters - pool : 0) + (actors > pool ? actors - pool : 0)))
}
cgroup_dirs() {
	local d
	for d in /sys/fs/cgroup/*/sharness-"$UID_FIRST" /sys/fs/cgroup/unified/sharness-"$UID_FIRST"; do
		[ -d "$d" ] && find "$d" -mindepth 1 -maxdepth 1 -type d -name 'run-*'
	done
}
leaked_cgroups() {
	local w n=0 d u
	w=" $(waiter_uids | tr '\n' ' ') "
	for d in $(cgroup_dirs); do
		u=${d##*/run-}
		[[ "$w" == *" $u "* ]] || n=$((n + 1))
	done
	echo "$n"
}
uid_procs() { ps -eo uid= | awk -v u="$1" '$1 == u' | wc -l; }
cmd_uid() { range_ps | awk -v c="$1" '$3 == c {print $1; exit}'; }
