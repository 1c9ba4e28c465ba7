# Interop tests of tessera::io .npy files, included by tests/CMakeLists.txt: npy_interop writes .npy
# files on 3 ranks that numpy checks, and loads on 2 ranks the files numpy wrote. The Python
# tests exit 77 (skipped) without numpy; npy_interop read then finds no files and skips too.
add_executable(npy_interop ${CMAKE_CURRENT_SOURCE_DIR}/io/npy_interop.cpp)
target_link_libraries(npy_interop PRIVATE tessera::io)

set(_npy_dir ${CMAKE_CURRENT_BINARY_DIR}/npy_interop_files)
file(MAKE_DIRECTORY ${_npy_dir})
if(EXISTS /usr/bin/python3)
  set(TESSERA_NPY_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with numpy for the .npy interop tests")
else()
  find_program(TESSERA_NPY_PYTHON python3)
endif()

tessera_add_mpi_test(NAME npy_interop_write TARGET npy_interop RANKS 3 LABELS io ARGS write ${_npy_dir}/from_cpp)
tessera_add_mpi_test(NAME npy_interop_read TARGET npy_interop RANKS 2 LABELS io ARGS read ${_npy_dir}/from_numpy)
set_tests_properties(npy_interop_write_np3 PROPERTIES FIXTURES_SETUP npy_from_cpp WORKING_DIRECTORY ${_npy_dir})
set_tests_properties(npy_interop_read_np2 PROPERTIES FIXTURES_REQUIRED npy_from_numpy WORKING_DIRECTORY ${_npy_dir}
                     SKIP_RETURN_CODE 77)
if(TESSERA_NPY_PYTHON)
  add_test(NAME npy_numpy_check COMMAND ${TESSERA_NPY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/io/npy_check.py check ${_npy_dir}/from_cpp)
  add_test(NAME npy_numpy_write COMMAND ${CMAKE_COMMAND} -E make_directory ${_npy_dir}/from_numpy)
  add_test(NAME npy_numpy_write_files
           COMMAND ${TESSERA_NPY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/io/npy_check.py write ${_npy_dir}/from_numpy)
  set_tests_properties(npy_numpy_check PROPERTIES FIXTURES_REQUIRED npy_from_cpp WORKING_DIRECTORY ${_npy_dir}
                       SKIP_RETURN_CODE 77 LABELS io)
  set_tests_properties(npy_numpy_write PROPERTIES FIXTURES_SETUP npy_from_numpy LABELS io)
  set_tests_properties(npy_numpy_write_files PROPERTIES FIXTURES_SETUP npy_from_numpy DEPENDS npy_numpy_write
                       WORKING_DIRECTORY ${_npy_dir} SKIP_RETURN_CODE 77 LABELS io)
endif()
