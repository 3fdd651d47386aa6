# Sourced by the CLI test scripts: a scratch directory $tmp (made and removed at exit
# unless the script made one), a failure count $failures, `fail MESSAGE`, and
# expect STATUS FRAGMENT -- command..., which runs the command, keeps its stdout in
# $tmp/stdout, and counts a failure unless it exits with STATUS and FRAGMENT appears in
# its stderr or stdout.
if [ -z "${tmp:-}" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
fi
failures=${failures:-0}

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

expect() {
  local want_status="$1" fragment="$2"
  shift 3
  local out status
  out=$("$@" 2>&1 >"$tmp/stdout")
  status=$?
  if [ "$status" != "$want_status" ] ||
    ! { grep -qF -- "$fragment" <<<"$out" || grep -qaF -- "$fragment" "$tmp/stdout"; }; then
    fail "$* -> status $status (want $want_status), stderr: $out," \
      "stdout: $(head -c 400 "$tmp/stdout" | tr -d '\0') (want '$fragment')"
  else
    echo "ok: $* -> $status: $(head -c 160 <<<"$out$(head -c 160 "$tmp/stdout" |
      tr -d '\0')" | tr '\n' ' ')"
  fi
}

# skip_without FILE...: ends the script unless every FILE exists (a skip, or a failure
# under EMBER_REQUIRE_MODELS=1).
skip_without() {
  local file
  for file in "$@"; do
    [ -f "$file" ] && continue
    if [ "${EMBER_REQUIRE_MODELS:-0}" = 1 ]; then echo "FAIL: $file missing"; exit 1; fi
    echo "SKIP: $file missing"
    exit 0
  done
}
