#!/usr/bin/env bash
# Every API error code the daemon can send is explained in
# docs/troubleshooting.md (issue 17): the codes are read from the code
# itself, so a new one without a row fails here.
. "$(dirname "$0")/lib.sh"
codes=$(grep -rhoE 'request_error_set\([^,]*, *[0-9]+, *"[a-z_]+"' "$ROOT"/daemon/*/*.c | sed -E 's/.*"([a-z_]+)"$/\1/' | sort -u)
check "the code names some error codes (the search works)" test "$(wc -l <<<"$codes")" -ge 20
missing=
for c in $codes; do
	grep -q "^| \`$c\` | [0-9]\{3\} |" "$ROOT/docs/troubleshooting.md" || missing="$missing $c"
done
check_eq "every error code has a row in docs/troubleshooting.md" "${missing:-none}" none
# And the status in the row is the one the code sends.
wrong=
while read -r st c; do
	grep -q "^| \`$c\` | $st |" "$ROOT/docs/troubleshooting.md" || wrong="$wrong $c($st)"
done < <(grep -rhoE 'request_error_set\([^,]*, *[0-9]+, *"[a-z_]+"' "$ROOT"/daemon/*/*.c |
	sed -E 's/.*, *([0-9]+), *"([a-z_]+)"$/\1 \2/' | sort -u)
check_eq "each row gives the status the code sends" "${wrong:-none}" none
# A row for a code that no longer exists is stale.
stale=
for c in $(grep -oE '^\| `[a-z_]+` \| [0-9]{3} \|' "$ROOT/docs/troubleshooting.md" | sed -E 's/^\| `([a-z_]+)`.*/\1/'); do
	grep -qx "$c" <<<"$codes" || stale="$stale $c"
done
check_eq "no row for a code the daemon does not send" "${stale:-none}" none
[ "$E2E_FAILED" = 0 ]
