#!/usr/bin/env bash
# `pip install ./python` as the README says (Debian's pip, setuptools and wheel;
# --no-build-isolation: nothing fetched), into a scratch target with this build's
# libember.so (EMBER_LIBRARY: the install copies it into the package). The installed
# package must then load its own copy and generate what the CLI generates.
#   python_install_test.sh PYTHON SOURCE_DIR LIBEMBER MODEL EMBER_CLI
set -euo pipefail
python="$1" source="$2" library="$3" model="$4" cli="$5"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# pip builds in the tree it is given: a copy keeps the checkout clean. Without the
# build/ and egg-info a local `pip install ./python` leaves: setuptools would reuse the
# stale copies of the modules there.
cp -r "$source/python" "$work/src"
rm -rf "$work/src/build" "$work/src"/*.egg-info
EMBER_LIBRARY="$library" PYTHONDONTWRITEBYTECODE=1 "$python" -m pip install \
  --no-build-isolation --no-deps --no-index --quiet --root-user-action=ignore \
  --target "$work/site" "$work/src"
test -f "$work/site/ember/_lib/libember.so" || { echo "no libember.so installed"; exit 1; }
test -f "$work/site/ember/py.typed" || { echo "no py.typed installed"; exit 1; }
got=$(cd "$work" && env -u EMBER_LIBRARY PYTHONPATH="$work/site" PYTHONDONTWRITEBYTECODE=1 \
  "$python" -c '
import sys, ember
from ember._capi import lib
assert lib.path.startswith(sys.argv[1]), lib.path
session = ember.Session(ember.Model(sys.argv[2]), context=64)
print("Once upon a time" + session.generate("Once upon a time", max_new=30))
' "$work/site" "$model")
want=$("$cli" run -m "$model" -p "Once upon a time" -n 30 --temp 0 2>/dev/null)
if [ "$got" != "$want" ]; then
  printf 'installed package: %s\nCLI:               %s\n' "$got" "$want"
  exit 1
fi
echo "installed and generated: $got"
