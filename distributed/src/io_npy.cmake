# Sources of the io_npy part (target_sources(tessera_distributed PRIVATE ...)).
