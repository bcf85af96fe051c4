# LENS_SANITIZE=address,undefined (or thread) instruments everything built in this tree.
if(LENS_SANITIZE)
  set(_flags -fsanitize=${LENS_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  if(LENS_SANITIZE MATCHES "undefined")
    # Known third-party reports, see the file. GCC has no ignorelist: drop the one check.
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      list(APPEND _flags "-fsanitize-ignorelist=${CMAKE_CURRENT_LIST_DIR}/sanitizer-ignorelist.txt")
    else()
      list(APPEND _flags -fno-sanitize=pointer-overflow)
    endif()
  endif()
  # Line tables are all a sanitizer report symbolises; full debug info made the instrumented
  # build ~12% slower. Compressed (-gz) in objects and programs: `make test` writes ~150
  # instrumented programs, and uncompressed line tables were a third of their 3.7 GB; the
  # symbolizer and gdb read zlib sections as they are.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    list(APPEND _flags -gline-tables-only -gz=zlib)
  endif()
  add_compile_options(${_flags})
  add_link_options(${_flags})
  set(LENS_SANITIZER_FLAGS ${_flags})  # what a program linking this build's liblens.a needs
  # lld links the instrumented programs (hundreds of them with tests) much faster than ld.bfd.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    find_program(LENS_LLD ld.lld)
    if(LENS_LLD)
      add_link_options(-fuse-ld=lld)
      list(APPEND LENS_SANITIZER_FLAGS -fuse-ld=lld)
    endif()
  endif()
  message(STATUS "lens: building with -fsanitize=${LENS_SANITIZE}")

  # Programs Lens does not build (python3 loading the `lens` module) need the AddressSanitizer
  # runtime preloaded: LENS_SANITIZER_PRELOAD names it for their tests' LD_PRELOAD. With clang,
  # every program of the build links the same shared runtime (-shared-libsan), so a daemon started
  # from such a test (LD_PRELOAD inherited) loads it once instead of clashing with a static copy.
  set(LENS_SANITIZER_PRELOAD "")
  if(LENS_SANITIZE MATCHES "address")
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      set(_runtime libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
    else()
      set(_runtime libasan.so)
    endif()
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_runtime}
                    OUTPUT_VARIABLE LENS_SANITIZER_PRELOAD OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT EXISTS "${LENS_SANITIZER_PRELOAD}")
      message(FATAL_ERROR "lens: no sanitizer runtime ${_runtime} next to ${CMAKE_CXX_COMPILER}")
    endif()
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      get_filename_component(_runtime_dir "${LENS_SANITIZER_PRELOAD}" DIRECTORY)
      add_link_options(-shared-libsan "-Wl,-rpath,${_runtime_dir}")
      list(APPEND LENS_SANITIZER_FLAGS -shared-libsan "-Wl,-rpath,${_runtime_dir}")
    endif()
  endif()
endif()

# Fuzzer builds: coverage instrumentation for all code, so libFuzzer sees liblens's branches
# (fuzz/ links its targets with -fsanitize=fuzzer).
if(LENS_BUILD_FUZZERS AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  add_compile_options(-fsanitize=fuzzer-no-link)
  list(APPEND LENS_SANITIZER_FLAGS -fsanitize=fuzzer-no-link)
endif()
