# cmake -P script: copies one .proto from SRC to DST, rewriting `import weak` to `import`.
# containerd's API files import gogo options weakly; protoc 3.21's C++ generator then emits
# references it cannot resolve, so the staged copies import them normally.
file(READ "${SRC}" content)
string(REPLACE "import weak " "import " content "${content}")
file(WRITE "${DST}.tmp" "${content}")
file(COPY_FILE "${DST}.tmp" "${DST}" ONLY_IF_DIFFERENT)
file(REMOVE "${DST}.tmp")
