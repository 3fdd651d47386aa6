# Toolchain for x86-64 Linux on Debian multiarch (g++-x86-64-linux-gnu on an arm64 host,
# or the native compiler under its triplet name on an x86-64 host); qemu-x86_64 runs the
# tests only when the host is not x86-64. Highway picks SSSE3 ... AVX-512 at run time.
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(EMBER_TRIPLET x86_64-linux-gnu)
set(EMBER_DEBIAN_ARCH amd64)
set(EMBER_QEMU qemu-x86_64)
include(${CMAKE_CURRENT_LIST_DIR}/debian-multiarch.cmake)
