# One precompiled header for the tests: GoogleTest and the standard headers most test
# files include. Precompiled, they save 2-3.5 s of a typical test file's 4-12 s (g++ 12
# at -O3, clang-14 under ASan), and there are ~90 such files per build directory.
#
# A precompiled header is used only when compiled with the same flags as its user (g++
# ignores it otherwise, clang refuses to compile), so it is built by a target of each
# kind: an executable (-fPIE) for the test binaries, a static library (-fPIC) for the
# test helper libraries. Both take the flags every target gets (ember_options, the
# sanitizer and coverage options) and GoogleTest's. nlohmann/json stays out: loading it
# costs ~1 s in every file that does not use it.
# Call after every test target is defined.
#
# The test binaries' own files compile at EMBER_TEST_OPTIMIZE (-O1) in optimized builds:
# what they time is nothing (no test depends on timing) and what they run fast is the
# library's code, which keeps the build type's flags. -O1 instead of -O3 takes about 30 %
# off a test file's compile (hf_import_test.cc for aarch64: 8.1 s to 5.8 s), and there
# are ~90 test files in each of the four builds CI makes. The kernel tests compiled once
# per Highway target keep the build type's flags: they compile the kernels themselves
# (the -inl.h files), whose results they compare bit for bit across entry points.
set(EMBER_TEST_OPTIMIZE "-O1" CACHE STRING
    "Optimization of the test binaries' own files in optimized builds (empty: the build type's)")

set(EMBER_TEST_PCH_HEADERS
  <algorithm> <cmath> <cstdint> <cstdio> <cstdlib> <cstring> <memory> <random>
  <string> <vector> <gtest/gtest.h>)

# Lists the targets defined in `dir` and its subdirectories into `var`.
function(ember_targets_under dir var)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    ember_targets_under("${sub}" sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${var} ${targets} PARENT_SCOPE)
endfunction()

# Files compiled once per Highway target (hwy/foreach_target.h) take no precompiled
# header: the aarch64 g++ 12 crashes (ICE in arm_sve.h's #pragma) on them with any. They
# get the build type's flags again after the target's (`restore`: the last -O wins).
function(ember_skip_pch_for_highway_targets target restore)
  get_target_property(dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  foreach(source ${sources})
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${dir}")
    if(path MATCHES "\\.cc$" AND EXISTS "${path}")
      file(STRINGS "${path}" per_target REGEX "^#include \"hwy/foreach_target.h\"")
      if(per_target)
        set_source_files_properties("${path}" TARGET_DIRECTORY ${target}
                                    PROPERTIES SKIP_PRECOMPILE_HEADERS ON
                                               COMPILE_OPTIONS "${restore}")
      endif()
    endif()
  endforeach()
endfunction()

# Every GoogleTest binary (it links GTest::gtest_main) and the libraries given use it.
function(ember_test_pch)
  set(source "${PROJECT_BINARY_DIR}/ember_test_pch.cc")
  file(CONFIGURE OUTPUT "${source}" CONTENT "int main() { return 0; }\n")
  add_executable(ember_test_pch EXCLUDE_FROM_ALL "${source}")
  add_library(ember_test_pch_lib STATIC EXCLUDE_FROM_ALL "${source}")
  # Appended after the build type's flags, so its -O wins; Debug builds keep -O0.
  set(optimize "")
  set(restore "")
  if(EMBER_TEST_OPTIMIZE AND CMAKE_BUILD_TYPE AND NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    set(optimize ${EMBER_TEST_OPTIMIZE})
    string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
    separate_arguments(restore UNIX_COMMAND "${CMAKE_CXX_FLAGS_${config}}")
  endif()
  foreach(holder ember_test_pch ember_test_pch_lib)
    target_link_libraries(${holder} PRIVATE ember_options GTest::gtest)
    target_compile_options(${holder} PRIVATE ${optimize})
    target_precompile_headers(${holder} PRIVATE ${EMBER_TEST_PCH_HEADERS})
  endforeach()
  ember_targets_under("${PROJECT_SOURCE_DIR}" targets)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    get_target_property(libs ${target} LINK_LIBRARIES)
    get_target_property(sources ${target} SOURCES)
    # Not a binary with C sources too (c_api_test's shim): the holder has no C header.
    list(FILTER sources INCLUDE REGEX "\\.c$")
    if(type STREQUAL "EXECUTABLE" AND "GTest::gtest_main" IN_LIST libs AND NOT sources)
      target_precompile_headers(${target} REUSE_FROM ember_test_pch)
      target_compile_options(${target} PRIVATE ${optimize})
      ember_skip_pch_for_highway_targets(${target} "${restore}")
    endif()
  endforeach()
  foreach(target ${ARGN})
    target_precompile_headers(${target} REUSE_FROM ember_test_pch_lib)
    target_compile_options(${target} PRIVATE ${optimize})
  endforeach()
endfunction()
