# Interop tests of the io_npy part (add_test ...), included by tests/CMakeLists.txt.
