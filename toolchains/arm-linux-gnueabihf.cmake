# Toolchain for 32-bit Arm Linux, armv7-a hard-float with NEON, on Debian multiarch:
# g++-arm-linux-gnueabihf, the :armhf libraries, tests under qemu-arm.
# Use: cmake -DCMAKE_TOOLCHAIN_FILE=toolchains/arm-linux-gnueabihf.cmake
#
# NEON is part of the baseline, not chosen at run time: Highway 1.0.3 marks its armv7
# NEON target with the attribute "+neon-vfpv4", which g++ 12 rejects ("inlining failed
# ... target specific option mismatch") when the baseline lacks NEON, as Debian's armhf
# baseline (VFPv3-D16) does. So Highway compiles one target, NEON, dispatched statically,
# and kernels/kernel_table.cc makes hwy::SupportedTargets() report NEON from HWCAP_NEON
# (Debian's libhwy1:armhf does not), which Highway's per-target tests rely on.
#
# EMBER_ARMV7_FPU picks the floating-point unit the binary requires:
#   neon-vfpv4  (default) NEON with fused multiply-add: Cortex-A5/A7/A12/A15/A17
#   neon        NEON without VFPv4 (Cortex-A8/A9); Highway emulates FMA as mul + add
#   vfpv3-d16   no NEON (Debian's armhf baseline): Highway's NEON target is disabled and
#               the kernels are scalar
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(EMBER_TRIPLET arm-linux-gnueabihf)
set(EMBER_DEBIAN_ARCH armhf)
set(EMBER_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/debian-multiarch.cmake)

list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EMBER_ARMV7_FPU)
if(NOT EMBER_ARMV7_FPU)
  set(EMBER_ARMV7_FPU neon-vfpv4)
endif()
# hwy/base.h needs IEEE half precision (__fp16) on 32-bit Arm. -Wno-psabi: g++ notes
# on every std::vector<int64_t> that GCC 7.1 changed how such arguments are passed,
# which only matters when linking code built by GCC < 7.1.
set(_ember_arm_flags
    "-march=armv7-a -mfpu=${EMBER_ARMV7_FPU} -mfloat-abi=hard -mfp16-format=ieee -Wno-psabi")
if(NOT EMBER_ARMV7_FPU MATCHES "neon")
  string(APPEND _ember_arm_flags " -DHWY_DISABLED_TARGETS=HWY_NEON")
endif()
set(CMAKE_C_FLAGS_INIT "${_ember_arm_flags}")
set(CMAKE_CXX_FLAGS_INIT "${_ember_arm_flags}")
