# tessera_public_headers(<root> <out>): the public headers of the source tree at <root>, as
# "<absolute path>|<include name>" pairs: every .hpp under the layers' own include folders
# (<layer>/include/tessera/ and <layer>/<part>/include/tessera/), not build trees' copies.
# Used at configure time (CMakeLists.txt) and by check_umbrella.cmake (cmake -P).
function(tessera_public_headers root out)
  set(again CONFIGURE_DEPENDS)  # a new header re-runs configure (not available to cmake -P)
  if(CMAKE_SCRIPT_MODE_FILE)
    set(again "")
  endif()
  file(GLOB_RECURSE headers ${again} "${root}/*/include/tessera/*.hpp" "${root}/*/*/include/tessera/*.hpp")
  set(pairs "")
  foreach(h IN LISTS headers)
    file(RELATIVE_PATH from_root "${root}" "${h}")
    if(from_root MATCHES "^(local|comm|distributed)(/[a-z_]+)?/include/(tessera/.*)$")
      list(APPEND pairs "${h}|${CMAKE_MATCH_3}")
    endif()
  endforeach()
  set(${out} "${pairs}" PARENT_SCOPE)
endfunction()
