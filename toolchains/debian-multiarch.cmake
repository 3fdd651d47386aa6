# Shared part of the Debian multiarch toolchain files (included by them, not used alone):
# g++-<triplet> cross compilers, libraries from the :<arch> packages in /usr/lib/<triplet>,
# XNNPACK/pthreadpool from a private prefix, and qemu-user as the test emulator.
#
# The including file sets CMAKE_SYSTEM_PROCESSOR, EMBER_TRIPLET (aarch64-linux-gnu),
# EMBER_DEBIAN_ARCH (arm64) and EMBER_QEMU (qemu-aarch64).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${EMBER_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${EMBER_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${EMBER_TRIPLET})

# XNNPACK and pthreadpool are not multi-arch in Debian 12 (installing the :arm64 package
# removes the amd64 one), so tools/scripts/setup.sh unpacks them into $EMBER_DEPS/<arch>.
if(NOT DEFINED EMBER_DEPS_PREFIX)
  if(DEFINED ENV{EMBER_DEPS})
    set(_ember_deps "$ENV{EMBER_DEPS}")
  else()
    set(_ember_deps /opt/ember-deps)
  endif()
  set(EMBER_DEPS_PREFIX "${_ember_deps}/${EMBER_DEBIAN_ARCH}" CACHE PATH
      "Prefix holding the unpacked ${EMBER_DEBIAN_ARCH} XNNPACK and pthreadpool packages")
endif()

# No CMAKE_SYSROOT: Debian's cross compilers already know /usr/<triplet>, and a sysroot of
# / breaks the compiler check. Libraries, headers and CMake packages are searched for
# under the private prefix first, then / (where /usr/lib/<triplet> holds the :<arch>
# packages); programs (flatc) always come from the host.
set(CMAKE_FIND_ROOT_PATH "${EMBER_DEPS_PREFIX}" /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${EMBER_TRIPLET}/pkgconfig:/usr/share/pkgconfig")

# ctest (and gtest_discover_tests) run test binaries through qemu-user. Deliberately no
# -L /usr/<triplet> or QEMU_LD_PREFIX: the cross libc's ld.so does not match the
# multiarch libc.so.6 and threads hang or crash; plain qemu finds /lib/ld-linux-*.so
# and the multiarch libraries by itself. QEMU_CPU in the environment picks the CPU.
# -DCMAKE_CROSSCOMPILING_EMULATOR= (empty) keeps it out, for a tree run on the board.
if(NOT DEFINED CMAKE_CROSSCOMPILING_EMULATOR AND
   NOT CMAKE_HOST_SYSTEM_PROCESSOR STREQUAL CMAKE_SYSTEM_PROCESSOR AND
   EXISTS /usr/bin/${EMBER_QEMU})
  set(CMAKE_CROSSCOMPILING_EMULATOR /usr/bin/${EMBER_QEMU})
endif()
