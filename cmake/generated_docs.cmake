# Writes dpscope(1) and the bash/zsh/fish completion scripts with a dpscope
# that runs on the build machine (cmake -P, from the dpscope_docs target):
#   cmake "-DGENERATOR=dpscope[;emulator args]" -DOUT=DIR -P generated_docs.cmake
# Both are printed from the command table (src/cli/command_table.cpp) and do
# not depend on the architecture: a cross build gives the host build's binary
# (DPSCOPE_DOC_GENERATOR), and tests/packaging checks the arm64 binary prints
# the same under qemu.
file(MAKE_DIRECTORY ${OUT}/man/man1 ${OUT}/completions)
function(dpscope_write file)
  execute_process(COMMAND ${GENERATOR} ${ARGN} OUTPUT_FILE ${file}.tmp RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(REMOVE ${file}.tmp)
    message(FATAL_ERROR "${GENERATOR} ${ARGN}: exit ${rc}")
  endif()
  file(RENAME ${file}.tmp ${file})
endfunction()
dpscope_write(${OUT}/man/man1/dpscope.1 man)
foreach(shell bash zsh fish)
  dpscope_write(${OUT}/completions/dpscope.${shell} completion ${shell})
endforeach()
