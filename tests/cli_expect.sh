# Sourced by the CLI test scripts: a scratch directory $tmp (made and removed at exit
# unless the script made one), a failure count $failures, `fail MESSAGE`, and
# expect STATUS FRAGMENT -- command..., which runs the command, keeps its stdout in
# $tmp/stdout, and counts a failure unless it exits with STATUS and FRAGMENT appears in
# its stdout or stderr.
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
  "$@" >"$tmp/stdout" 2>"$tmp/stderr"
  status=$?
  out=$(cat "$tmp/stderr" "$tmp/stdout")
  if [ "$status" != "$want_status" ] || ! grep -qF -- "$fragment" <<<"$out"; then
    fail "$* -> status $status (want $want_status), output: $(tail -c 400 <<<"$out") (want '$fragment')"
  else
    echo "ok: $* -> $status: $(head -c 160 <<<"$out" | tr '\n' ' ')"
  fi
}
