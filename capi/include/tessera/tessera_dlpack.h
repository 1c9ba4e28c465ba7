/* DLPack exchange of shards (C API; needs <dlpack/dlpack.h>, DLPack 0.6 or later).
 *  - tessera_array_to_dlpack: this rank's shard (with halos, or its interior as a strided view)
 *    as a DLManagedTensor on kDLCPU or kDLCUDA with the array's dtype. The tensor keeps the shard
 *    alive until its deleter runs, even after tessera_array_free (adopted memory stays the
 *    caller's to keep). numpy.from_dlpack / cupy.from_dlpack read it without a copy.
 *  - tessera_array_from_dlpack: adopts a tensor as the shard of `layout` (its shape must be the
 *    padded shard shape, row-major and compact, on the host or the runtime's GPU); the array
 *    calls the tensor's deleter when it is freed (or, on failure, leaves the tensor to the caller).
 */
#ifndef TESSERA_TESSERA_DLPACK_H
#define TESSERA_TESSERA_DLPACK_H

#include <dlpack/dlpack.h>

#include "tessera/tessera.h"

#ifdef __cplusplus
extern "C" {
#endif

tessera_status tessera_array_to_dlpack(tessera_array a, int with_halos, DLManagedTensor** out);
tessera_status tessera_array_from_dlpack(tessera_layout layout, DLManagedTensor* tensor, void* stream,
                                         tessera_array* out);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_TESSERA_DLPACK_H */
