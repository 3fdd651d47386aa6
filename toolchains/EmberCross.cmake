# Test registration: GoogleTest binaries (ember_gtests, at the end), and cross builds,
# whose test binaries run under an emulator (qemu-user through
# CMAKE_CROSSCOMPILING_EMULATOR; see toolchains/).

# Label for tests that need the build machine itself (the package test builds with the
# host compiler): ember_native_only() below labels them and disables them in a cross
# build. (The PyTorch oracle tests carry the label oracle instead: they can run the
# cross-built ember under the emulator, and tools/scripts/test.sh leaves them out of the qemu
# runs only for time.)
set(EMBER_NATIVE_ONLY_LABEL native-only)

if(CMAKE_CROSSCOMPILING)
  # One CTest test per GoogleTest binary instead of one per case:
  # - the Highway targets a kernel test instantiates are those the emulated CPU supports
  #   when it runs (QEMU_CPU), while gtest_discover_tests would freeze the list of
  #   whatever CPU the emulator had at build time;
  # - every process under qemu pays the emulator's start-up and the binary's own set-up
  #   (golden_test converts stories260K), so one process per binary keeps the matrix
  #   quick.
  # Same signature as GoogleTest's; the options that only make sense for discovery are
  # accepted and ignored. A binary that ran no test at all (every case filtered out or
  # no target instantiated) fails rather than passes.
  function(gtest_discover_tests target)
    cmake_parse_arguments(arg "NO_PRETTY_TYPES;NO_PRETTY_VALUES"
      "TEST_PREFIX;TEST_SUFFIX;WORKING_DIRECTORY;TEST_LIST;DISCOVERY_TIMEOUT;XML_OUTPUT_DIR;DISCOVERY_MODE;TEST_FILTER"
      "EXTRA_ARGS;PROPERTIES" ${ARGN})
    set(name "${arg_TEST_PREFIX}${target}${arg_TEST_SUFFIX}")
    if(NOT arg_WORKING_DIRECTORY)
      set(arg_WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
    endif()
    add_test(NAME ${name} COMMAND ${target} ${arg_EXTRA_ARGS}
             WORKING_DIRECTORY "${arg_WORKING_DIRECTORY}")
    set_tests_properties(${name} PROPERTIES
      FAIL_REGULAR_EXPRESSION "\\[==========\\] 0 tests from")
    if(arg_PROPERTIES)
      set_tests_properties(${name} PROPERTIES ${arg_PROPERTIES})
    endif()
  endfunction()
endif()

# Sets <var> to a command the host can run for executable <target>: the binary itself,
# or in a cross build a generated script that runs it under the emulator (for test
# scripts that take the ember binary as an argument).
function(ember_host_command var target)
  if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
    list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " emulator)
    set(wrapper "${PROJECT_BINARY_DIR}/emulated/${target}")
    file(GENERATE OUTPUT "${wrapper}"
         CONTENT "#!/bin/sh\nexec ${emulator} \"$<TARGET_FILE:${target}>\" \"$@\"\n"
         FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                          WORLD_READ WORLD_EXECUTE)
    set(${var} "${wrapper}" PARENT_SCOPE)
  else()
    set(${var} "$<TARGET_FILE:${target}>" PARENT_SCOPE)
  endif()
endfunction()

# Marks tests as native-only: labelled so the qemu runs can exclude them
# (ctest -LE native-only), and disabled in a cross build. Call in the directory that
# added the tests.
function(ember_native_only)
  set_property(TEST ${ARGN} APPEND PROPERTY LABELS ${EMBER_NATIVE_ONLY_LABEL})
  if(CMAKE_CROSSCOMPILING)
    set_tests_properties(${ARGN} PROPERTIES DISABLED TRUE)
  endif()
endfunction()

# ember_gtests(NAMES a b ... LIBS lib ... [PROPERTIES prop value ...]): a GoogleTest
# binary <name>_test from <name>_test.cc for each name, linked with LIBS and gtest_main,
# its cases registered with CTest (with PROPERTIES, such as LABELS kernel).
function(ember_gtests)
  cmake_parse_arguments(arg "" "" "NAMES;LIBS;PROPERTIES" ${ARGN})
  foreach(name ${arg_NAMES})
    add_executable(${name}_test ${name}_test.cc)
    target_link_libraries(${name}_test PRIVATE ${arg_LIBS} GTest::gtest_main)
    if(arg_PROPERTIES)
      gtest_discover_tests(${name}_test DISCOVERY_TIMEOUT 120
                           PROPERTIES ${arg_PROPERTIES})
    else()
      gtest_discover_tests(${name}_test DISCOVERY_TIMEOUT 120)
    endif()
  endforeach()
endfunction()
