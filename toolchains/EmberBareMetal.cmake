# Highway and FlatBuffers for bare-metal builds (EMBER_BARE_METAL), as headers only.
#
# Debian ships them for the build machine and its multiarch targets, never for
# arm-none-eabi; but what the runtime and the kernels need of them is header code:
# Highway compiled for its one static target (HWY_COMPILE_ONLY_STATIC, set on
# ember_options) plus the few out-of-line symbols examples/firmware/hwy_static.cc defines,
# and FlatBuffers' verifier and accessors. The host's header trees are linked into a
# directory of the build tree that holds nothing else: putting /usr/include itself on the
# cross compiler's path would let glibc's headers shadow newlib's.
# (A Generic platform has no system include path, hence the PATHS.)
find_path(EMBER_HWY_INCLUDE_DIR hwy/highway.h PATHS /usr/local/include /usr/include
          NO_CMAKE_FIND_ROOT_PATH REQUIRED)
find_path(EMBER_FLATBUFFERS_INCLUDE_DIR flatbuffers/flatbuffers.h
          PATHS /usr/local/include /usr/include NO_CMAKE_FIND_ROOT_PATH REQUIRED)
set(_ember_headers "${CMAKE_BINARY_DIR}/bare-metal-include")
file(MAKE_DIRECTORY "${_ember_headers}")
foreach(dir "${EMBER_HWY_INCLUDE_DIR}/hwy" "${EMBER_FLATBUFFERS_INCLUDE_DIR}/flatbuffers")
  get_filename_component(_name "${dir}" NAME)
  file(CREATE_LINK "${dir}" "${_ember_headers}/${_name}" SYMBOLIC)
endforeach()

add_library(hwy::hwy INTERFACE IMPORTED)
set_target_properties(hwy::hwy PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_ember_headers}")
add_library(flatbuffers::flatbuffers INTERFACE IMPORTED)
set_target_properties(flatbuffers::flatbuffers PROPERTIES
                      INTERFACE_INCLUDE_DIRECTORIES "${_ember_headers}")
