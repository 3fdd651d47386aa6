# Toolchain for 32-bit Arm Linux, armv7-a hard-float with NEON, on Debian multiarch:
# g++-arm-linux-gnueabihf, the :armhf libraries, tests under qemu-arm.
# Use: cmake -DCMAKE_TOOLCHAIN_FILE=toolchains/arm-linux-gnueabihf.cmake
#
# NEON is part of the baseline (-mfpu=neon-vfpv4), not chosen at run time: Highway 1.0.3
# marks its armv7 NEON target with the attribute "+neon-vfpv4", which g++ 12 rejects
# ("inlining failed ... target specific option mismatch") when the baseline lacks NEON,
# as Debian's armhf baseline (VFPv3-D16) does. So Highway compiles exactly one target,
# NEON, dispatched statically, and the binary needs a CPU with NEON (all Cortex-A5/A7/A8/
# A9/A15/A17 boards but a few old Tegra 2 / Armada parts). kernels/cpu_targets.cc makes
# hwy::SupportedTargets() report NEON from HWCAP_NEON, which Debian's libhwy1:armhf
# does not. For an armv7 CPU without NEON pass -DEMBER_ARMV7_NEON=OFF: VFPv3-D16 only,
# Highway's NEON target disabled, scalar kernels.
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(EMBER_TRIPLET arm-linux-gnueabihf)
set(EMBER_DEBIAN_ARCH armhf)
set(EMBER_QEMU qemu-arm)
include(${CMAKE_CURRENT_LIST_DIR}/debian-multiarch.cmake)

list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EMBER_ARMV7_NEON)
if(NOT DEFINED EMBER_ARMV7_NEON OR EMBER_ARMV7_NEON)
  # hwy/base.h needs IEEE half precision (__fp16) on 32-bit Arm.
  set(_ember_arm_flags "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mfp16-format=ieee")
else()
  set(_ember_arm_flags "-march=armv7-a -mfpu=vfpv3-d16 -mfloat-abi=hard -mfp16-format=ieee -DHWY_DISABLED_TARGETS=HWY_NEON")
endif()
set(CMAKE_C_FLAGS_INIT "${_ember_arm_flags}")
set(CMAKE_CXX_FLAGS_INIT "${_ember_arm_flags}")
