#!/usr/bin/env bash
# tests/e2e/landlock.sh - Landlock by ABI through the real daemon:
# GET /v0/policy lists every right of landlock.c's table (as docs/landlock.md
# carries it; test_landlock_abi ties the two together) with the lock that
# enforces it on this kernel, the ABI it reports is the kernel's own, and a
# landlock_min_abi above the running ABI refuses to start with the sentence
# that names the ABI and this kernel's release.  Nothing here pretends to be
# an older kernel: on this host every right must be Landlock's own up to the
# running ABI.
. "$(dirname "$0")/lib.sh"

# The kernel's answer, asked without the daemon's code:
# landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION).
KABI=$(python3 -c 'import ctypes; print(ctypes.CDLL(None).syscall(444, None, 0, 1))')
KREL=$(uname -r)
echo "# kernel $KREL, Landlock ABI $KABI"
# The rows of docs/landlock.md's table: "name since" per right.
DOC_ROWS=$(sed -n 's/^| `\([a-z_]*\)` | \([0-9]\) | .*|$/\1 \2/p' "$ROOT/docs/landlock.md")
check "docs/landlock.md has the table" test "$(printf '%s\n' "$DOC_ROWS" | grep -c .)" -ge 20

e2e_start
api GET /v0/policy
check_eq "policy: 200" "$STATUS" 200
check_eq "policy: landlock.abi is the kernel's ABI" "$(jf .kernel.landlock.abi)" "$KABI"
check_eq "policy: landlock_abi kept, the same number" "$(jf .kernel.landlock_abi)" "$KABI"
check_eq "policy: min_abi is the default 1" "$(jf .kernel.landlock.min_abi)" 1
check_eq "policy: every right of the table is listed, in its order" \
	"$(jf '.kernel.landlock.rights[] | "\(.right) \(.since_abi)"')" "$DOC_ROWS"
check_eq "policy: each right has a non-empty enforcing lock" \
	"$(jf '[.kernel.landlock.rights[] | select((.enforced_by | type) != "string" or .enforced_by == "")] | length')" 0
check_eq "policy: each right of this ABI is enforced by Landlock itself" \
	"$(jf '[.kernel.landlock.rights[] | select(.since_abi <= '"$KABI"' and .enforced_by != "Landlock")] | length')" 0
check_eq "policy: each right newer than this ABI is enforced by its other lock" \
	"$(jf '[.kernel.landlock.rights[] | select(.since_abi > '"$KABI"' and .enforced_by != .other_lock)] | length')" 0
check_eq "policy: every right newer than ABI 1 names the lock that covers it on older kernels" \
	"$(jf '[.kernel.landlock.rights[] | select(.since_abi > 1 and ((.other_lock | type) != "string" or .other_lock == ""))] | length')" 0
check_eq "policy: ABI 1 rights name no other lock" \
	"$(jf '[.kernel.landlock.rights[] | select(.since_abi == 1 and .other_lock != null)] | length')" 0
check_match "policy: refer's other lock is ABI 1's EXDEV" \
	"$(jf '.kernel.landlock.rights[] | select(.right == "refer") | .other_lock')" 'EXDEV'
run_cmd 'echo sandboxed'
check_eq "a run works at the default landlock_min_abi" "$STATUS $(jf .stdout)" "200 sandboxed"
e2e_stop

# landlock_min_abi equal to the running ABI: starts, and the policy says so.
if [ "$KABI" -le 8 ]; then
	e2e_start "{\"landlock_min_abi\": $KABI}"
	api GET /v0/policy
	check_eq "landlock_min_abi $KABI (= the running ABI): starts, policy min_abi $KABI" \
		"$STATUS $(jf .kernel.landlock.min_abi)" "200 $KABI"
	e2e_stop
else
	echo "# skipped: landlock_min_abi = ABI, since ABI $KABI is above the 8 the configuration accepts (1 check)"
fi

# landlock_min_abi above the running ABI: refuses to start, one true sentence.
if [ "$KABI" -lt 8 ]; then
	want=$((KABI + 1))
	case $want in
	2) up=" (upstream Linux 5.19 and newer)" ;; 3) up=" (upstream Linux 6.2 and newer)" ;;
	4) up=" (upstream Linux 6.7 and newer)" ;; 5) up=" (upstream Linux 6.10 and newer)" ;;
	6) up=" (upstream Linux 6.12 and newer)" ;; 7) up=" (upstream Linux 6.15 and newer)" ;;
	*) up="" ;;
	esac
	jq --argjson m "$want" '.landlock_min_abi = $m' "$T/sharnessd.json" >"$T/above.json"
	out=$(timeout 20 "$SHARNESSD" --config "$T/above.json" 2>&1); rc=$?
	check_eq "landlock_min_abi $want > ABI $KABI: exit 1" "$rc" 1
	check_eq "landlock_min_abi $want > ABI $KABI: the sentence names the ABI, the kernel and the fixes" "$out" \
		"sharnessd: Landlock ABI $KABI on kernel $KREL is below landlock_min_abi $want; boot a kernel with Landlock ABI $want or newer$up, or lower landlock_min_abi in the configuration to $KABI"
	check_eq "landlock_min_abi $want > ABI $KABI: nothing of the range was started" \
		"$(ps -eo uid= | awk -v f="$UID_FIRST" '$1>=f && $1<f+4096' | wc -l)" 0
	check "landlock_min_abi $want > ABI $KABI: no listener on the port" \
		bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null"
else
	echo "# skipped: landlock_min_abi above the ABI, since this build knows no ABI above $KABI (4 checks)"
fi
