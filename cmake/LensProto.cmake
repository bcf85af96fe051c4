# protobuf/gRPC code generation (protoc 3.21 + grpc_cpp_plugin 1.51 from Debian). Provides
#   lens_proto_generate(OUT_SRCS OUT_HDRS ROOT <dir> OUT <dir> [GRPC] PROTOS <relative paths>)
#       runs protoc (and grpc_cpp_plugin with GRPC) on each ROOT-relative .proto, writing
#       <OUT>/<path>.pb.{h,cc} (+ .grpc.pb.{h,cc}); adds the generated file lists to OUT_SRCS
#       and OUT_HDRS in the caller's scope.
# and, through LensGrpc, the imported target lens::grpc.
include(LensGrpc)

if(NOT LENS_PROTOC)
  find_program(LENS_PROTOC protoc REQUIRED)
  find_program(LENS_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
endif()

function(lens_proto_generate out_srcs out_hdrs)
  cmake_parse_arguments(ARG "GRPC" "ROOT;OUT" "PROTOS;DEPENDS" ${ARGN})
  set(srcs)
  set(hdrs)
  foreach(proto IN LISTS ARG_PROTOS)
    string(REGEX REPLACE "\\.proto$" "" stem "${proto}")
    set(outputs "${ARG_OUT}/${stem}.pb.cc" "${ARG_OUT}/${stem}.pb.h")
    set(plugin_args)
    if(ARG_GRPC)
      list(APPEND outputs "${ARG_OUT}/${stem}.grpc.pb.cc" "${ARG_OUT}/${stem}.grpc.pb.h")
      set(plugin_args "--grpc_out=${ARG_OUT}" "--plugin=protoc-gen-grpc=${LENS_GRPC_CPP_PLUGIN}")
    endif()
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND ${CMAKE_COMMAND} -E make_directory "${ARG_OUT}"
      COMMAND ${LENS_PROTOC} "-I${ARG_ROOT}" "--cpp_out=${ARG_OUT}" ${plugin_args}
              "${ARG_ROOT}/${proto}"
      DEPENDS "${ARG_ROOT}/${proto}" ${ARG_DEPENDS}
      COMMENT "protoc ${proto}"
      VERBATIM)
    foreach(f IN LISTS outputs)
      if(f MATCHES "\\.cc$")
        list(APPEND srcs "${f}")
      else()
        list(APPEND hdrs "${f}")
      endif()
    endforeach()
  endforeach()
  set(${out_srcs} ${${out_srcs}} ${srcs} PARENT_SCOPE)
  set(${out_hdrs} ${${out_hdrs}} ${hdrs} PARENT_SCOPE)
endfunction()
