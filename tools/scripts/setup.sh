#!/usr/bin/env bash
# Installs every Debian package ember's build, tests and cross builds need. Idempotent:
# when everything is already there it only checks, in about a second.
#
#   tools/scripts/setup.sh          # build + demo: compilers, Highway, FlatBuffers, XNNPACK, GoogleTest,
#                           # nlohmann-json, unicode-data + python3 (build-time Unicode table)
#   tools/scripts/setup.sh all      # plus what the full test suite needs: clang (fuzzers, sanitizers),
#                           # python3-torch (oracles), python3-jsonschema (the JSON Schema
#                           # oracle), pytest, pip and setuptools (the Python package's
#                           # tests and `pip install ./python`), chromium (SVG rendering), cross
#                           # compilers, qemu-user and the arm64/armhf libraries, the
#                           # Cortex-M55 bare-metal toolchain (newlib) with qemu-system-arm,
#                           # Node.js with the npm package @lenml/tokenizers (the Hugging
#                           # Face tokenizer oracle) in $EMBER_DEPS/node, and the chat
#                           # template oracles: python3-jinja2 and the npm package
#                           # @huggingface/jinja (pinned) in $EMBER_DEPS/npm
set -euo pipefail

profile="${1:-build}"
case "$profile" in build|all) ;; *) echo "usage: $0 [build|all]" >&2; exit 2 ;; esac

# Where the arm64/armhf XNNPACK and pthreadpool packages are unpacked (they are not
# multi-arch: installing them with apt would remove the amd64 ones; see PLATFORM notes).
deps_prefix="${EMBER_DEPS:-/opt/ember-deps}"

sudo_cmd=()
if [ "$(id -u)" != 0 ]; then sudo_cmd=(sudo); fi
log() { echo "[setup] $*" >&2; }

native_pkgs=(
  build-essential cmake ninja-build pkg-config git file
  libhwy-dev libflatbuffers-dev flatbuffers-compiler
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  nlohmann-json3-dev unicode-data python3
)
test_pkgs=(
  clang-14 libclang-rt-14-dev lld-14 llvm-14
  python3-numpy python3-torch python3-jinja2 python3-jsonschema nodejs
  python3-pytest python3-pip python3-setuptools python3-wheel
  python3-matplotlib python3-seaborn python3-pil
  default-jdk-headless junit5 libjsr305-java
  chromium
  qemu-user g++-aarch64-linux-gnu g++-arm-linux-gnueabihf
)
# The microcontroller image (examples/mcu, tools/scripts/mcu.sh): arm-none-eabi GCC with
# newlib and its libstdc++, run on qemu-system-arm's mps3-an547 board.
mcu_pkgs=(
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm
)
cross_arches=(arm64 armhf)
# -dev packages that coexist with their amd64 twins (multi-arch: same).
cross_pkgs=(libhwy-dev libflatbuffers-dev libgtest-dev libgmock-dev libbenchmark-dev libcpuinfo0)
# Unpacked, not installed.
cross_unpack=(libxnnpack0 libxnnpack-dev libpthreadpool0 libpthreadpool-dev)

wanted=("${native_pkgs[@]}")
if [ "$profile" = all ]; then
  wanted+=("${test_pkgs[@]}" "${mcu_pkgs[@]}")
  for arch in "${cross_arches[@]}"; do
    for p in "${cross_pkgs[@]}"; do wanted+=("$p:$arch"); done
  done
fi

native_arch=$(dpkg --print-architecture)
is_installed() {  # pkg or pkg:arch; a bare name means the native (or arch-independent) one
  local name="${1%%:*}" arch="${1#*:}"
  [ "$arch" = "$1" ] && arch="$native_arch"
  dpkg-query -W -f='${Architecture} ${Status}\n' "$name" 2>/dev/null |
    grep -Eq "^($arch|all) install ok installed$"
}
missing=()
for p in "${wanted[@]}"; do
  is_installed "$p" || missing+=("$p")
done

need_arch=()
if [ "$profile" = all ]; then
  foreign=$(dpkg --print-foreign-architectures)
  for arch in "${cross_arches[@]}"; do
    grep -qx "$arch" <<<"$foreign" || need_arch+=("$arch")
  done
fi

apt_updated=0
apt_update() {
  [ "$apt_updated" = 1 ] && return 0
  log "apt-get update"
  # The armhf security index currently fails with a size mismatch and apt-get update exits
  # 100 although every other index was fetched; tolerate exactly that code.
  local rc=0
  "${sudo_cmd[@]}" apt-get update -qq || rc=$?
  if [ "$rc" != 0 ] && [ "$rc" != 100 ]; then
    log "apt-get update failed with exit code $rc"; exit "$rc"
  fi
  [ "$rc" = 100 ] && log "apt-get update exited 100 (known armhf security index mismatch): continuing"
  apt_updated=1
}

for arch in "${need_arch[@]}"; do
  log "dpkg --add-architecture $arch"
  "${sudo_cmd[@]}" dpkg --add-architecture "$arch"
done

if [ "${#missing[@]}" -gt 0 ]; then
  apt_update
  log "installing ${#missing[@]} packages: ${missing[*]}"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
else
  log "all ${#wanted[@]} packages for '$profile' are installed"
fi

# The tokenizer oracle: transformers.js' tokenizers as the npm package @lenml/tokenizers
# (pinned), run by Node.js. A machine that has node and npm keeps them (Debian's nodejs and
# npm otherwise; installing Debian's npm beside another nodejs would replace it).
node_oracle_pkg="@lenml/tokenizers"
node_oracle_version="3.7.2"
node_prefix="$deps_prefix/node"
if [ "$profile" = all ]; then
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    apt_update
    log "installing nodejs npm"
    "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends nodejs npm >/dev/null
  fi
  installed=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' \
    "$node_prefix/node_modules/$node_oracle_pkg/package.json" 2>/dev/null | head -1 || true)
  if [ "$installed" != "$node_oracle_version" ]; then
    log "npm install $node_oracle_pkg@$node_oracle_version into $node_prefix"
    "${sudo_cmd[@]}" mkdir -p "$node_prefix"
    "${sudo_cmd[@]}" npm install --prefix "$node_prefix" --no-audit --no-fund \
      --ignore-scripts --save-exact --loglevel=error "$node_oracle_pkg@$node_oracle_version" >/dev/null
  fi
fi

if [ "$profile" = all ]; then
  for arch in "${cross_arches[@]}"; do
    dest="$deps_prefix/$arch"
    if [ -f "$dest/.complete" ]; then continue; fi
    apt_update
    log "unpacking ${cross_unpack[*]} ($arch) into $dest"
    tmp=$(mktemp -d); chmod 755 "$tmp"  # apt downloads as user _apt
    (cd "$tmp" && apt-get download -qq $(printf "%s:$arch " "${cross_unpack[@]}"))
    "${sudo_cmd[@]}" mkdir -p "$dest"
    for deb in "$tmp"/*.deb; do "${sudo_cmd[@]}" dpkg-deb -x "$deb" "$dest"; done
    rm -rf "$tmp"
    "${sudo_cmd[@]}" touch "$dest/.complete"
  done
fi
# The chat template oracle's reference: @huggingface/jinja at a pinned version, from the
# npm registry into $EMBER_DEPS/npm (never committed). Debian's nodejs comes without npm;
# a machine whose Node.js brings its own npm uses that.
if [ "$profile" = all ]; then
  jinja_version=0.5.11
  jinja_dir="$deps_prefix/npm"
  jinja_package="$jinja_dir/node_modules/@huggingface/jinja/package.json"
  if ! grep -qs "\"version\": \"$jinja_version\"" "$jinja_package"; then
    if ! command -v npm >/dev/null; then
      apt_update
      "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends npm >/dev/null
    fi
    log "npm install @huggingface/jinja@$jinja_version into $jinja_dir"
    "${sudo_cmd[@]}" mkdir -p "$jinja_dir"
    "${sudo_cmd[@]}" npm install --prefix "$jinja_dir" --no-save --no-audit --no-fund \
      --loglevel=error "@huggingface/jinja@$jinja_version" >/dev/null
  fi
fi
log "done ($profile)"
