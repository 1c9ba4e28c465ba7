# numpy.histogram interop, included by tests/CMakeLists.txt: histogram_numpy.py writes inputs and
# numpy's counts (a setup fixture), histogram_interop reproduces them at 1-5 ranks on the host and
# the GPU. Both skip (77) without numpy; TESSERA_NPY_PYTHON is io_npy.cmake's Python with numpy.
add_executable(histogram_interop ${CMAKE_CURRENT_SOURCE_DIR}/distributed/histogram_interop.cpp)
target_link_libraries(histogram_interop PRIVATE tessera::io tessera::distributed)

set(_hist_dir ${CMAKE_CURRENT_BINARY_DIR}/histogram_numpy_files)
if(TESSERA_NPY_PYTHON)
  add_test(NAME histogram_numpy_write
           COMMAND ${TESSERA_NPY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/distributed/histogram_numpy.py ${_hist_dir})
  set_tests_properties(histogram_numpy_write PROPERTIES FIXTURES_SETUP histogram_numpy SKIP_RETURN_CODE 77
                       LABELS distributed)
endif()
tessera_add_mpi_test(NAME histogram_numpy TARGET histogram_interop RANKS ${TESSERA_TEST_RANKS} 5 TIMEOUT 300
                     LABELS distributed ARGS ${_hist_dir})
foreach(n IN LISTS TESSERA_TEST_RANKS ITEMS 5)
  set_tests_properties(histogram_numpy_np${n} PROPERTIES FIXTURES_REQUIRED histogram_numpy SKIP_RETURN_CODE 77)
endforeach()
