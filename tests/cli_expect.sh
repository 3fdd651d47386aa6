# Shared by the CLI test scripts (sourced): a scratch directory $tmp removed at exit, a
# failure count, and `expect`, which runs a command and checks its status and message.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect STATUS MESSAGE_FRAGMENT -- command...: stdout goes to $tmp/stdout.
expect() {
  local want_status="$1" fragment="$2"
  shift 3
  local out status
  out=$("$@" 2>&1 >"$tmp/stdout")
  status=$?
  if [ "$status" != "$want_status" ] || ! grep -qF -- "$fragment" <<<"$out"; then
    fail "$* -> status $status (want $want_status), stderr: $(tail -c 400 <<<"$out") (want '$fragment')"
  else
    echo "ok: $* -> $status: $(tail -n 1 <<<"$out" | head -c 160)"
  fi
}
