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
  # build ~12% slower.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    list(APPEND _flags -gline-tables-only)
  endif()
  add_compile_options(${_flags})
  add_link_options(${_flags})
  message(STATUS "lens: building with -fsanitize=${LENS_SANITIZE}")
endif()

# Fuzzer builds: coverage instrumentation for all code, so libFuzzer sees liblens's branches
# (fuzz/ links its targets with -fsanitize=fuzzer).
if(LENS_BUILD_FUZZERS AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
