# Sources of the consistency part: the cross-rank check of each distributed call (TESSERA_CHECK).
target_sources(tessera_distributed PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host/consistency.cpp)
