# gRPC 1.51 + protobuf 3.21 from Debian as the imported target lens::grpc, through pkg-config:
# Debian's gRPC CMake package drags in absl/re2/c-ares package configs that are not needed here.
# pkg-config walks grpc++'s abseil graph in about half a second per question, and
# pkg_check_modules asks it 14 questions (every field, shared and static), which cost every
# configure ~16 s: Lens's own and each project's find_package(lens). Two questions suffice, the
# compile flags and the libraries (Debian's shared libraries: order and repeats do not matter).
if(NOT TARGET lens::grpc)
  find_package(PkgConfig REQUIRED)
  set(lens_grpc_flags "")
  foreach(lens_grpc_question cflags libs)
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --${lens_grpc_question} grpc++ protobuf
                    OUTPUT_VARIABLE lens_grpc_answer ERROR_VARIABLE lens_grpc_error
                    RESULT_VARIABLE lens_grpc_result OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT lens_grpc_result EQUAL 0)
      message(FATAL_ERROR "lens: pkg-config finds no grpc++ and protobuf "
                          "(libgrpc++-dev, libprotobuf-dev): ${lens_grpc_error}")
    endif()
    separate_arguments(lens_grpc_answer UNIX_COMMAND "${lens_grpc_answer}")
    set(lens_grpc_${lens_grpc_question} ${lens_grpc_answer})
  endforeach()
  set(lens_grpc_includes "")
  set(lens_grpc_options "")
  foreach(lens_grpc_flag IN LISTS lens_grpc_cflags)
    if(lens_grpc_flag MATCHES "^-I(.+)$")
      list(APPEND lens_grpc_includes "${CMAKE_MATCH_1}")
    else()
      list(APPEND lens_grpc_options "${lens_grpc_flag}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES lens_grpc_libs)
  add_library(lens::grpc INTERFACE IMPORTED)
  set_target_properties(lens::grpc PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${lens_grpc_includes}"
    INTERFACE_COMPILE_OPTIONS "${lens_grpc_options}"
    INTERFACE_LINK_LIBRARIES "${lens_grpc_libs}")
endif()
