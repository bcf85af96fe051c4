# LENS_SANITIZE=address,undefined (or thread) instruments everything built in this tree.
if(LENS_SANITIZE)
  set(_flags -fsanitize=${LENS_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${_flags})
  add_link_options(${_flags})
  message(STATUS "lens: building with -fsanitize=${LENS_SANITIZE}")
endif()
