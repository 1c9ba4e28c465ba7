# Sources of the halo part (target_sources(tessera_distributed PRIVATE ...)).
# Plain C++ on both backends: packing uses the precompiled strided copy of the local layer.
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_LIST_DIR}/host/halo.cpp)
