# Sources of the creation part (target_sources(tessera_distributed PRIVATE ...)).
