# Sourced by the CLI test scripts: fail MESSAGE counts a failure; expect STATUS FRAGMENT
# -- command... runs the command (stdout into $tmp/stdout) and checks its exit status and
# that FRAGMENT appears in its stderr. The script sets $tmp and failures=0 first.
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
  if [ "$status" != "$want_status" ] || ! grep -qF -- "$fragment" <<<"$out"; then
    fail "$* -> status $status (want $want_status), stderr: $out (want '$fragment')"
  else
    echo "ok: $* -> $status: $(head -c 160 <<<"$out" | tr '\n' ' ')"
  fi
}
