# Sources of the halo part (target_sources(tessera_distributed PRIVATE ...)).
