# cmake -DTOOL=<tessera_kernel_cache> -DDIR=<scratch dir> -P kernel_cache_tool.cmake: the tool lists
# the kernel files of TESSERA_KERNEL_CACHE_DIR (and nothing else there), then --clear removes them.
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
file(WRITE "${DIR}/kernel_0123456789abcdef.cubin" "x")
file(WRITE "${DIR}/kernel_fedcba9876543210.cubin" "yy")
file(WRITE "${DIR}/notes.txt" "not a kernel")
set(ENV{TESSERA_KERNEL_CACHE_DIR} "${DIR}")
execute_process(COMMAND "${TOOL}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "2 kernel files, 3 bytes")
  message(FATAL_ERROR "tessera_kernel_cache listed (rc ${rc}):\n${out}")
endif()
execute_process(COMMAND "${TOOL}" --clear OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "removed 2 kernel files" OR NOT EXISTS "${DIR}/notes.txt"
   OR EXISTS "${DIR}/kernel_0123456789abcdef.cubin")
  message(FATAL_ERROR "tessera_kernel_cache --clear (rc ${rc}):\n${out}")
endif()
file(REMOVE_RECURSE "${DIR}")
