# Sources of the io_zarr part (target_sources(tessera_distributed PRIVATE ...)).
