# gRPC 1.51 + protobuf 3.21 from Debian as the imported target lens::grpc, through pkg-config:
# Debian's gRPC CMake package drags in absl/re2/c-ares package configs that are not needed here.
if(NOT TARGET lens::grpc)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(LENS_GRPC REQUIRED IMPORTED_TARGET grpc++ protobuf)
  add_library(lens::grpc INTERFACE IMPORTED)
  target_link_libraries(lens::grpc INTERFACE PkgConfig::LENS_GRPC)
endif()
