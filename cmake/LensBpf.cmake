# The BPF skeleton step: vmlinux.h from the kernel's BTF (bpftool), each bpf/<name>.bpf.c compiled
# with clang for the BPF target (CO-RE, with BTF), and bpftool's skeleton header
# <name>.skel.h. All three are build outputs under ${PROJECT_BINARY_DIR}/bpf; none is committed.
#
#   lens_bpf_skeleton(<target> <name>)   # adds <name>.skel.h to INTERFACE target <target>
#
# LENS_BPF_VMLINUX_BTF names the BTF to generate vmlinux.h from (default: this machine's
# /sys/kernel/btf/vmlinux). CO-RE relocates field offsets at load time, so the program built here
# runs on other kernels with BTF.
include(LensLibbpf)

find_program(LENS_CLANG_BPF NAMES clang clang-14)
find_program(LENS_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
set(LENS_BPF_VMLINUX_BTF "/sys/kernel/btf/vmlinux" CACHE FILEPATH "BTF for vmlinux.h")
set(_missing "")
if(NOT LENS_CLANG_BPF)
  list(APPEND _missing "clang (package clang)")
endif()
if(NOT LENS_BPFTOOL)
  list(APPEND _missing "bpftool (package bpftool)")
endif()
if(NOT EXISTS "${LENS_BPF_VMLINUX_BTF}")
  list(APPEND _missing "kernel BTF at ${LENS_BPF_VMLINUX_BTF} (set LENS_BPF_VMLINUX_BTF)")
endif()
if(_missing)
  string(JOIN ", " _missing_text ${_missing})
  message(FATAL_ERROR "LENS_BUILD_BPF=ON needs ${_missing_text}; run scripts/install-deps.sh "
                      "or configure with -DLENS_BUILD_BPF=OFF (no TCP flow probes then)")
endif()

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(LENS_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(LENS_BPF_ARCH arm64)
else()
  set(LENS_BPF_ARCH ${CMAKE_SYSTEM_PROCESSOR})
endif()

set(LENS_BPF_OUT "${PROJECT_BINARY_DIR}/bpf")
file(MAKE_DIRECTORY "${LENS_BPF_OUT}")
function(lens_bpf_skeleton target name)
  # vmlinux.h is generated in the directory of the skeletons that use it (a custom command's
  # output is visible to its own directory's targets only); all callers live in one directory.
  get_property(have_vmlinux GLOBAL PROPERTY LENS_BPF_VMLINUX_RULE)
  if(NOT have_vmlinux)
    set_property(GLOBAL PROPERTY LENS_BPF_VMLINUX_RULE TRUE)
    add_custom_command(
      OUTPUT "${LENS_BPF_OUT}/vmlinux.h"
      COMMAND "${LENS_BPFTOOL}" btf dump file "${LENS_BPF_VMLINUX_BTF}" format c
              > "${LENS_BPF_OUT}/vmlinux.h.tmp"
      COMMAND ${CMAKE_COMMAND} -E rename "${LENS_BPF_OUT}/vmlinux.h.tmp"
              "${LENS_BPF_OUT}/vmlinux.h"
      COMMENT "Generating vmlinux.h from ${LENS_BPF_VMLINUX_BTF}"
      VERBATIM)
  endif()
  set(src "${PROJECT_SOURCE_DIR}/bpf/${name}.bpf.c")
  set(obj "${LENS_BPF_OUT}/${name}.bpf.o")
  set(skel "${LENS_BPF_OUT}/${name}.skel.h")
  add_custom_command(
    OUTPUT "${obj}"
    COMMAND "${LENS_CLANG_BPF}" -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_${LENS_BPF_ARCH}
            -Wall -Werror -I "${LENS_BPF_OUT}" -I "${PROJECT_SOURCE_DIR}/bpf"
            -c "${src}" -o "${obj}"
    DEPENDS "${src}" "${PROJECT_SOURCE_DIR}/bpf/${name}.h" "${LENS_BPF_OUT}/vmlinux.h"
    COMMENT "Compiling BPF program ${name}.bpf.c"
    VERBATIM)
  add_custom_command(
    OUTPUT "${skel}"
    COMMAND "${LENS_BPFTOOL}" gen skeleton "${obj}" name ${name}_bpf > "${skel}.tmp"
    COMMAND ${CMAKE_COMMAND} -E rename "${skel}.tmp" "${skel}"
    DEPENDS "${obj}"
    COMMENT "Generating BPF skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(${target}_gen DEPENDS "${skel}")
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_gen)
  target_include_directories(${target} INTERFACE "${LENS_BPF_OUT}" "${PROJECT_SOURCE_DIR}/bpf")
  target_link_libraries(${target} INTERFACE lens::libbpf)
endfunction()
