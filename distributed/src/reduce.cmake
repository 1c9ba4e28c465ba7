# Sources of the reduce part (target_sources(tessera_distributed PRIVATE ...)).
