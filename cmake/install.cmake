# `cmake --install` (make install PREFIX=... DESTDIR=...): the binary, the
# kubectl plugin, dpscope(1), the completions where bash-completion, zsh and
# fish look for them, and the documentation. scripts/deb.sh packages the same
# tree (prefix /usr). `make uninstall` removes what install_manifest.txt lists.
include(GNUInstallDirs)
# One component, so that scripts/deb.sh's staging install (--component dpscope)
# writes its own manifest; directories 0755 whatever the umask (reproducible).
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME dpscope)
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE)

# The man page and the completions, written at build time by a dpscope that
# runs here: the one just built, or in a cross build the build machine's
# (-DDPSCOPE_DOC_GENERATOR=build/dpscope; without it, the target binary
# through CMAKE_CROSSCOMPILING_EMULATOR).
set(DPSCOPE_DOC_GENERATOR "" CACHE FILEPATH
    "dpscope binary that runs on the build machine, to write the man page and completions of a cross build")
set(DPSCOPE_DOCS_DIR ${PROJECT_BINARY_DIR}/share)
if(DPSCOPE_DOC_GENERATOR)
  set(doc_generator ${DPSCOPE_DOC_GENERATOR})
elseif(CMAKE_CROSSCOMPILING)
  if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
    message(FATAL_ERROR "a cross build needs -DDPSCOPE_DOC_GENERATOR=HOST_DPSCOPE (or qemu-user) for the man page")
  endif()
  set(doc_generator ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:dpscope>)
else()
  set(doc_generator $<TARGET_FILE:dpscope>)
endif()
set(DPSCOPE_DOC_FILES ${DPSCOPE_DOCS_DIR}/man/man1/dpscope.1 ${DPSCOPE_DOCS_DIR}/completions/dpscope.bash
                      ${DPSCOPE_DOCS_DIR}/completions/dpscope.zsh ${DPSCOPE_DOCS_DIR}/completions/dpscope.fish)
add_custom_command(OUTPUT ${DPSCOPE_DOC_FILES}
  COMMAND ${CMAKE_COMMAND} "-DGENERATOR=${doc_generator}" -DOUT=${DPSCOPE_DOCS_DIR}
          -P ${PROJECT_SOURCE_DIR}/cmake/generated_docs.cmake
  DEPENDS dpscope ${DPSCOPE_DOC_GENERATOR} ${PROJECT_SOURCE_DIR}/cmake/generated_docs.cmake
  COMMENT "dpscope(1) and the bash/zsh/fish completions"
  VERBATIM)
add_custom_target(dpscope_docs ALL DEPENDS ${DPSCOPE_DOC_FILES})

install(TARGETS dpscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dpscope)
# kubectl finds a plugin as kubectl-NAME on PATH.
install(PROGRAMS packaging/kubectl-dpscope DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT dpscope)
install(FILES ${DPSCOPE_DOCS_DIR}/man/man1/dpscope.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT dpscope)
# bash-completion and fish look in DATADIR of every XDG_DATA_DIRS entry
# (/usr/local/share and /usr/share).
install(FILES ${DPSCOPE_DOCS_DIR}/completions/dpscope.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME dpscope COMPONENT dpscope)
install(FILES ${DPSCOPE_DOCS_DIR}/completions/dpscope.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d COMPONENT dpscope)
# zsh: PREFIX/share/zsh/site-functions is in zsh's default fpath; Debian's
# zsh has /usr/local/share/zsh/site-functions but, for packages,
# /usr/share/zsh/vendor-completions. Chosen at install time: the prefix can
# be changed there (cmake --install --prefix).
install(CODE "
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(dpscope_zsh_dir \"\${CMAKE_INSTALL_PREFIX}/share/zsh/vendor-completions\")
  else()
    set(dpscope_zsh_dir \"\${CMAKE_INSTALL_PREFIX}/share/zsh/site-functions\")
  endif()
  file(INSTALL DESTINATION \"\${dpscope_zsh_dir}\" TYPE FILE RENAME _dpscope
       FILES \"${DPSCOPE_DOCS_DIR}/completions/dpscope.zsh\")
" COMPONENT dpscope)
# README's links (docs/cli.md, ...) stay right under DOCDIR.
install(FILES README.md ARCHITECTURE.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT dpscope)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT dpscope FILES_MATCHING PATTERN "*.md")
install(FILES packaging/daemonset.yaml DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT dpscope)

# What the last install wrote (install_manifest.txt, DESTDIR included), removed.
add_custom_target(uninstall
  COMMAND ${CMAKE_COMMAND} -DMANIFEST=${PROJECT_BINARY_DIR}/install_manifest.txt
          -P ${PROJECT_SOURCE_DIR}/cmake/uninstall.cmake
  VERBATIM)
