# Sources of the redistribute part (target_sources(tessera_distributed PRIVATE ...)).
