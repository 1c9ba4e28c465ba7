// Internal: the CUDA side of streams, events and memory, implemented in src/cuda/ and called
// from the backend-neutral code in src/host/ only in builds with TESSERA_HAVE_CUDA.
#pragma once
#include <cstddef>

#include "tessera/local/device.hpp"

namespace tessera::detail::cuda {
void* stream_create(int device, bool high_priority);
void stream_destroy(int device, void* s) noexcept;
void stream_synchronize(int device, void* s);
void* event_create(int device);
void event_destroy(int device, void* e) noexcept;
void event_record(int device, void* e, void* s);
void stream_wait_event(int device, void* s, void* e);
void event_synchronize(void* e);
float event_elapsed_ms(void* start, void* end);
int current_device();
void set_current_device(int device);

void* malloc_async(std::size_t bytes, int device, void* stream);  // throws OutOfMemory
void free_async(void* p, int device, void* stream) noexcept;
void* malloc_pinned(std::size_t bytes);
void free_pinned(void* p) noexcept;
void memcpy_async(void* dst, const void* src, std::size_t bytes, int device, void* stream);
}  // namespace tessera::detail::cuda
