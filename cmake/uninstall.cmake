# Removes every file the last `cmake --install` of this build tree wrote (its
# install_manifest.txt, which lists them without DESTDIR: give the same
# DESTDIR as the install did), then dpscope's own
# documentation directory if that is left empty; shared directories
# (bin, man1, the completion directories) stay.
#   cmake -DMANIFEST=BUILD/install_manifest.txt -P uninstall.cmake
if(NOT EXISTS ${MANIFEST})
  message(FATAL_ERROR "uninstall: no ${MANIFEST} (nothing was installed from this build tree)")
endif()
file(STRINGS ${MANIFEST} files)
set(doc_dirs "")
foreach(f IN LISTS files)
  set(f "$ENV{DESTDIR}${f}")
  if(IS_SYMLINK ${f} OR EXISTS ${f})
    file(REMOVE ${f})
    message(STATUS "removed ${f}")
  endif()
  if(f MATCHES "^(.*/doc/dpscope)/")
    list(APPEND doc_dirs ${CMAKE_MATCH_1})
  endif()
endforeach()
list(REMOVE_DUPLICATES doc_dirs)
foreach(d IN LISTS doc_dirs)
  foreach(sub docs examples "")
    file(GLOB left ${d}/${sub}/*)
    if(IS_DIRECTORY ${d}/${sub} AND NOT left)
      file(REMOVE_RECURSE ${d}/${sub})
    endif()
  endforeach()
endforeach()
file(REMOVE ${MANIFEST})
