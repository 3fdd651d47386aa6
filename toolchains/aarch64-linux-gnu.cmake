# Toolchain for 64-bit Arm Linux (armv8-a; NEON always, SVE/SVE2 chosen at run time) on
# Debian multiarch: g++-aarch64-linux-gnu, the :arm64 libraries, tests under
# qemu-aarch64. Use: cmake -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(EMBER_TRIPLET aarch64-linux-gnu)
set(EMBER_DEBIAN_ARCH arm64)
set(EMBER_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/debian-multiarch.cmake)
