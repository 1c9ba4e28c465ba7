# Interop tests of the io_zarr part (add_test ...), included by tests/CMakeLists.txt.
