# Toolchain for a Cortex-M55 microcontroller with no operating system (bare metal):
# Debian's gcc-arm-none-eabi with newlib (libnewlib-arm-none-eabi) and its libstdc++
# (libstdc++-arm-none-eabi-newlib), hard-float, Helium (MVE) and the FPU enabled.
# Use: cmake -DCMAKE_TOOLCHAIN_FILE=toolchains/cortex-m55.cmake -DEMBER_HOST_EMBER=...
#
# CMAKE_SYSTEM_NAME Generic is what makes the top-level CMakeLists.txt build for bare
# metal (EMBER_BARE_METAL): no threads, files, tools or tests, Highway and FlatBuffers as
# headers, and the microcontroller image (examples/mcu). GCC picks the multilib
# thumb/v8-m.main+dp/hard for these flags (newlib and libstdc++ built for Armv8-M
# mainline with a double-precision FPU): it runs on the M55, which adds MVE.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m55)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# The compiler checks cannot link a program without a board's start-up code and linker
# script (examples/mcu has them): they build a static library instead.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(_ember_m55_flags "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
set(CMAKE_C_FLAGS_INIT "${_ember_m55_flags}")
set(CMAKE_CXX_FLAGS_INIT "${_ember_m55_flags}")
set(CMAKE_ASM_FLAGS_INIT "${_ember_m55_flags}")

# Libraries and headers come from the toolchain alone; programs (flatc, python3, the
# host's ember) from the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/lib/arm-none-eabi)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
