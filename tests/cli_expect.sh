# Sourced by the CLI test scripts: expect STATUS FRAGMENT -- command... runs the command
# and counts a failure (in $failures) unless it exits with STATUS and FRAGMENT appears in
# its stdout or stderr.
expect() {
  local want_status="$1" fragment="$2"
  shift 3
  local out status
  out=$("$@" 2>&1)
  status=$?
  if [ "$status" != "$want_status" ] || ! grep -qF -- "$fragment" <<<"$out"; then
    echo "FAIL: $* -> status $status (want $want_status), output: $out (want '$fragment')"
    failures=$((failures + 1))
  else
    echo "ok: $* -> $status: $(head -c 160 <<<"$out" | tr '\n' ' ')"
  fi
}
