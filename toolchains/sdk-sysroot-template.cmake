# TEMPLATE for a board SDK that brings its own compiler and sysroot (Yocto/OpenEmbedded
# SDK, Buildroot's output/host, a vendor BSP). UNTESTED: this project's machines have no
# such SDK, and CI only exercises the Debian multiarch files next to this one. Copy it to
# my-board.cmake, fill in the settings below, and pass it as -DCMAKE_TOOLCHAIN_FILE.
#
# What the sysroot must hold (headers, libraries, CMake package files): Highway >= 1.0
# (hwy-config.cmake), FlatBuffers 2.0.x (its headers must match the *host* flatc, which
# CMake takes from the build machine's PATH), pthreadpool (or configure with
# -DEMBER_WITH_THREADS=OFF), and GoogleTest for the tests (or -DEMBER_BUILD_TESTS=OFF).
# Yocto: the SDK's environment script already sets CC/CXX/--sysroot and ships
# OEToolchainConfig.cmake; using that file directly is equivalent to this one.

# --- fill in ----------------------------------------------------------------------------
set(EMBER_SDK_SYSROOT /opt/my-sdk/sysroots/cortexa53-poky-linux)  # the target's root fs
set(EMBER_SDK_TOOLS /opt/my-sdk/sysroots/x86_64-pokysdk-linux/usr/bin/aarch64-poky-linux)
set(EMBER_SDK_PREFIX aarch64-poky-linux-)  # compiler names: ${prefix}gcc, ${prefix}g++
set(CMAKE_SYSTEM_PROCESSOR aarch64)         # or armv7l
# CPU flags. aarch64: NEON is always there and Highway picks SVE/SVE2 at run time, so
# -mcpu is optional. armv7: NEON must be in the baseline (see arm-linux-gnueabihf.cmake),
# e.g. "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee".
set(EMBER_SDK_CPU_FLAGS "-mcpu=cortex-a53")
# ----------------------------------------------------------------------------------------

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSROOT ${EMBER_SDK_SYSROOT})
set(CMAKE_C_COMPILER ${EMBER_SDK_TOOLS}/${EMBER_SDK_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${EMBER_SDK_TOOLS}/${EMBER_SDK_PREFIX}g++)
set(CMAKE_C_FLAGS_INIT "${EMBER_SDK_CPU_FLAGS}")
set(CMAKE_CXX_FLAGS_INIT "${EMBER_SDK_CPU_FLAGS}")

# Libraries, headers and packages only from the sysroot; programs (flatc) from the host.
set(CMAKE_FIND_ROOT_PATH ${EMBER_SDK_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${EMBER_SDK_SYSROOT})
set(ENV{PKG_CONFIG_LIBDIR}
    "${EMBER_SDK_SYSROOT}/usr/lib/pkgconfig:${EMBER_SDK_SYSROOT}/usr/share/pkgconfig")

# Running the tests on the build machine. A real SDK sysroot has an ld.so and a libc
# that belong together, so here (unlike Debian multiarch) qemu's -L is the right way to
# find them:
#   set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/qemu-aarch64 -L ${EMBER_SDK_SYSROOT})
# On the board instead: copy the build tree (same path, or adjust) and run ctest there,
# or set CMAKE_CROSSCOMPILING_EMULATOR to a script that copies the binary over ssh/adb
# and runs it (the test data under ../shared/models must be reachable there too).
#
# Android NDK: do not use this file; use the NDK's own,
#   -DCMAKE_TOOLCHAIN_FILE=$NDK/build/cmake/android.toolchain.cmake
#   -DANDROID_ABI=arm64-v8a -DANDROID_PLATFORM=android-29
# with Highway, FlatBuffers and pthreadpool built by the same NDK and found through
# CMAKE_FIND_ROOT_PATH, and the tests run on a device through adb.
