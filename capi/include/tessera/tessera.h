/* Tessera's C API (C11, usable from C and C++): distributed arrays for C and Fortran codes.
 *
 * Conventions
 *  - Every call returns a tessera_status; TESSERA_SUCCESS is 0. On failure, tessera_last_error()
 *    (per thread) says what failed, with the operation, the values, the rank and the device.
 *    No C++ exception crosses this boundary.
 *  - Objects are opaque handles (small structs holding an id). A zero handle, a freed handle or
 *    a handle of another kind is TESSERA_ERROR_INVALID_HANDLE, never a crash: ids carry a
 *    generation that freeing bumps. Freeing a zero handle is a no-op.
 *  - Shapes and indices are C order (row-major, axis 0 slowest), 0-based. The Fortran module
 *    reverses them.
 *  - Collective calls (marked "collective") must be made by every rank of the grid's group in
 *    the same order.
 *  - Array memory: host memory, or device memory on the runtime's GPU (TESSERA_MEMORY_DEVICE),
 *    with work ordered on the caller's cudaStream_t, passed as void* (NULL: the legacy stream).
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tessera_status {
  TESSERA_SUCCESS = 0,
  TESSERA_ERROR_INVALID_ARGUMENT = 1,  /* a bad value or a null pointer */
  TESSERA_ERROR_INVALID_HANDLE = 2,    /* zero, freed or of another kind */
  TESSERA_ERROR_SHAPE_MISMATCH = 3,
  TESSERA_ERROR_LAYOUT_MISMATCH = 4,
  TESSERA_ERROR_DEVICE_MISMATCH = 5,
  TESSERA_ERROR_DTYPE_MISMATCH = 6,
  TESSERA_ERROR_OUT_OF_MEMORY = 7,
  TESSERA_ERROR_BACKEND_UNAVAILABLE = 8, /* e.g. device memory in a build without CUDA */
  TESSERA_ERROR_IO = 9,
  TESSERA_ERROR_COMM = 10,             /* MPI, NCCL, a collective that failed or timed out */
  TESSERA_ERROR_CUDA = 11,
  TESSERA_ERROR_CONSISTENCY = 12,      /* ranks called an operation differently (TESSERA_CHECK=1) */
  TESSERA_ERROR_BUSY = 13,             /* an object still in use (a pending halo exchange) */
  TESSERA_ERROR_COMPILE = 14,          /* the runtime kernel compiler (NVRTC) rejected a kernel */
  TESSERA_ERROR_INTERNAL = 99
} tessera_status;

/* Every input enumeration has a *_RANGE_ member (not a value to pass): it widens the type to
 * the non-negative ints, so that a wrong value from C is a checked argument error in the library
 * (C++), not undefined behaviour. */
#define TESSERA_ENUM_RANGE_ 0x7FFFFFFF

typedef enum tessera_dtype {
  TESSERA_F32 = 0, TESSERA_F64 = 1, TESSERA_C64 = 2, TESSERA_C128 = 3, TESSERA_I32 = 4, TESSERA_I64 = 5,
  TESSERA_BOOL = 6, /* one byte per element, 0 or 1 */
  TESSERA_DTYPE_RANGE_ = TESSERA_ENUM_RANGE_
} tessera_dtype;

typedef enum tessera_memory {
  TESSERA_MEMORY_HOST = 0, TESSERA_MEMORY_DEVICE = 1, TESSERA_MEMORY_RANGE_ = TESSERA_ENUM_RANGE_
} tessera_memory;

typedef enum tessera_reduce_op {
  TESSERA_SUM = 0, TESSERA_PROD = 1, TESSERA_MIN = 2, TESSERA_MAX = 3, TESSERA_NORM2 = 4,
  TESSERA_ARGMIN = 5, TESSERA_ARGMAX = 6, /* tessera_reduce_axis only */
  TESSERA_REDUCE_RANGE_ = TESSERA_ENUM_RANGE_
} tessera_reduce_op;

typedef enum tessera_fft_type {
  TESSERA_FFT_C2C = 0, TESSERA_FFT_R2C = 1, TESSERA_FFT_C2R = 2, TESSERA_FFT_TYPE_RANGE_ = TESSERA_ENUM_RANGE_
} tessera_fft_type;
typedef enum tessera_fft_norm {
  TESSERA_NORM_BACKWARD = 0, TESSERA_NORM_ORTHO = 1, TESSERA_NORM_FORWARD = 2, TESSERA_NORM_NONE = 3,
  TESSERA_NORM_RANGE_ = TESSERA_ENUM_RANGE_
} tessera_fft_norm;
typedef enum tessera_fft_direction {
  TESSERA_FFT_FORWARD = -1, TESSERA_FFT_BACKWARD = 1, TESSERA_FFT_DIRECTION_RANGE_ = TESSERA_ENUM_RANGE_
} tessera_fft_direction;
typedef enum tessera_fft_decomposition {
  TESSERA_DECOMP_AUTO = 0, TESSERA_DECOMP_SLAB = 1, TESSERA_DECOMP_PENCIL = 2,
  TESSERA_DECOMP_RANGE_ = TESSERA_ENUM_RANGE_
} tessera_fft_decomposition;

typedef enum tessera_fft_spectral {
  TESSERA_SPECTRAL_INVERSE_LAPLACIAN = 1, TESSERA_SPECTRAL_LAPLACIAN = 2,
  TESSERA_SPECTRAL_RANGE_ = TESSERA_ENUM_RANGE_
} tessera_fft_spectral;

/* Opaque handles; {0} is the null handle of each kind. */
typedef struct tessera_runtime { uint64_t id; } tessera_runtime;
typedef struct tessera_grid { uint64_t id; } tessera_grid;
typedef struct tessera_layout { uint64_t id; } tessera_layout;
typedef struct tessera_array { uint64_t id; } tessera_array;
typedef struct tessera_halo { uint64_t id; } tessera_halo;
typedef struct tessera_fft_plan { uint64_t id; } tessera_fft_plan;
typedef struct tessera_checkpoint_writer { uint64_t id; } tessera_checkpoint_writer;
typedef struct tessera_checkpoint_reader { uint64_t id; } tessera_checkpoint_reader;

#define TESSERA_MAX_RANK 4

/* ---- Errors, version ---- */
/* The message of this thread's last failed call ("" if none); valid until its next failed call. */
const char* tessera_last_error(void);
/* A constant name for a status ("TESSERA_ERROR_INVALID_HANDLE"). */
const char* tessera_status_name(tessera_status status);
/* "0.1.0"; major/minor/patch may be NULL. */
const char* tessera_version(int* major, int* minor, int* patch);
/* Handles alive in this process (of every kind): 0 once a program has freed everything. */
int64_t tessera_live_handles(void);

/* ---- Runtime: MPI (initialized unless the caller did), the context, this rank's device ---- */
/* Collective over `comm`. device: NULL or "" (one GPU per node-local rank, else host; the
 * TESSERA_DEVICE setting), "host", "cuda" or "cuda:N". One runtime at a time per process; free
 * it (after every other handle) before MPI_Finalize. */
tessera_status tessera_runtime_create(MPI_Comm comm, const char* device, tessera_runtime* out);
/* The same over MPI_COMM_WORLD, for bindings that cannot name an MPI_Comm (Python ctypes, Julia). */
tessera_status tessera_runtime_create_world(const char* device, tessera_runtime* out);
/* The same for a Fortran communicator (MPI_Comm_f2c). */
tessera_status tessera_runtime_create_f(MPI_Fint comm, const char* device, tessera_runtime* out);
tessera_status tessera_runtime_free(tessera_runtime rt);
tessera_status tessera_runtime_rank(tessera_runtime rt, int* rank, int* size);
/* "host" or "cuda:N" into buf (NUL-terminated, truncated to len); *is_cuda may be NULL. */
tessera_status tessera_runtime_device(tessera_runtime rt, char* buf, size_t len, int* is_cuda);
/* Waits for the runtime device's work (Tessera's default stream). */
tessera_status tessera_runtime_synchronize(tessera_runtime rt);

/* Memory on the runtime's device (host memory for TESSERA_MEMORY_HOST), for callers without a
 * CUDA toolchain of their own (e.g. Fortran); tessera_memcpy copies between either kind. */
tessera_status tessera_malloc(tessera_runtime rt, tessera_memory kind, size_t bytes, void** ptr);
tessera_status tessera_free(tessera_runtime rt, tessera_memory kind, void* ptr);
tessera_status tessera_memcpy(tessera_runtime rt, void* dst, tessera_memory dst_kind, const void* src,
                              tessera_memory src_kind, size_t bytes);

/* ---- Process grids: an N-D Cartesian grid of the runtime's ranks ---- */
/* Collective. dims: ndims extents, 0 = chosen like MPI_Dims_create (NULL: all chosen).
 * periodic: ndims flags or NULL (per grid axis; layouts carry their own periodicity). */
tessera_status tessera_grid_create(tessera_runtime rt, int ndims, const int* dims, const int* periodic,
                                   tessera_grid* out);
tessera_status tessera_grid_free(tessera_grid grid);
/* ndims, and dims/coords (ndims values each; either may be NULL). */
tessera_status tessera_grid_info(tessera_grid grid, int* ndims, int* dims, int* coords);

/* ---- Layouts: a global shape over a grid ---- */
/* ndim 1..4. shape: extents. split: per array axis the grid axis it is split over, or -1 (NULL:
 * axis a over grid axis a). offsets: NULL (balanced blocks), or per axis parts+1 non-decreasing
 * values from 0 to shape[a], concatenated (parts: the grid extent of its split axis, 1 if whole).
 * halo: widths or NULL (0). periodic: per array axis or NULL (none). */
tessera_status tessera_layout_create(tessera_grid grid, int ndim, const int64_t* shape, const int* split,
                                     const int64_t* offsets, const int64_t* halo, const int* periodic,
                                     tessera_layout* out);
tessera_status tessera_layout_free(tessera_layout layout);
/* ndim, global shape; this rank's block [lo, hi); its shard's shape (block plus halos). Any
 * output may be NULL. */
tessera_status tessera_layout_info(tessera_layout layout, int* ndim, int64_t* shape, int64_t* lo, int64_t* hi,
                                   int64_t* padded);
/* The number of elements of this rank's shard (with halos) and of the global array. */
tessera_status tessera_layout_sizes(tessera_layout layout, int64_t* shard_elements, int64_t* global_elements);

/* ---- Arrays: one shard per rank ---- */
/* A new zero-filled array on the runtime's device. */
tessera_status tessera_array_create(tessera_layout layout, tessera_dtype dtype, tessera_array* out);
/* Adopts the caller's buffer (no copy): this rank's padded shard, row-major, `elements` long
 * (at least the shard's size), in memory `kind`; work on it is ordered on `stream` (a
 * cudaStream_t for device memory; NULL: the legacy default stream; ignored for host memory).
 * The buffer must outlive the array. Complex values are interleaved (re, im). */
tessera_status tessera_array_adopt(tessera_layout layout, tessera_dtype dtype, void* data, int64_t elements,
                                   tessera_memory kind, void* stream, tessera_array* out);
tessera_status tessera_array_free(tessera_array a);
/* The shard's first element (with halos), dtype, memory kind; any output may be NULL. */
tessera_status tessera_array_info(tessera_array a, void** data, tessera_dtype* dtype, tessera_memory* kind);
/* A new handle to the array's layout (free it). */
tessera_status tessera_array_layout(tessera_array a, tessera_layout* out);
/* Copies this rank's block (interior, no halos; `elements` = its size) to / from a contiguous
 * row-major host buffer. Waits for the array's stream. */
tessera_status tessera_array_read(tessera_array a, void* host, int64_t elements);
tessera_status tessera_array_write(tessera_array a, const void* host, int64_t elements);
/* The same for a box of the block: the block's indices start[d], start[d] + step[d], ... below
 * stop[d] along every axis d, step > 0; a box may reach into the halos (-halo <= start <= stop <=
 * extent + halo). `elements` counts the box. */
tessera_status tessera_array_read_box(tessera_array a, const int64_t* start, const int64_t* stop, const int64_t* step,
                                      void* host, int64_t elements);
tessera_status tessera_array_write_box(tessera_array a, const int64_t* start, const int64_t* stop,
                                       const int64_t* step, const void* host, int64_t elements);
/* Copies a box of src's block (as above) into dst's whole block, on their device: same dtype,
 * device and rank; dst's block has the box's shape. Not collective. */
tessera_status tessera_array_copy_box(tessera_array dst, tessera_array src, const int64_t* start, const int64_t* stop,
                                      const int64_t* step);
/* Waits for the work queued on the array's stream. */
tessera_status tessera_array_synchronize(tessera_array a);

/* ---- Halo exchange (collective) ---- */
tessera_status tessera_halo_exchange(tessera_array a);
/* Split phase: begin starts the transfers; while pending the interior may be read, not written.
 * end completes them and frees the handle. The array cannot be freed while one is pending. */
tessera_status tessera_halo_exchange_begin(tessera_array a, tessera_halo* out);
tessera_status tessera_halo_exchange_end(tessera_halo h);

/* ---- Moving data (collective) ---- */
/* Writes src's interior into dst's interior; dst has the same global shape, dtype and device
 * and any layout over the same ranks. */
tessera_status tessera_redistribute(tessera_array src, tessera_array dst);
/* The global array, row-major, into `buf` (`elements` = the global size, memory `kind` on the
 * runtime's device) on rank `root` of the grid's group; other ranks may pass NULL. */
tessera_status tessera_gather(tessera_array a, int root, void* buf, int64_t elements, tessera_memory kind);
/* Fills a's interior from the global array in root's `buf`. */
tessera_status tessera_scatter(tessera_array a, int root, const void* buf, int64_t elements, tessera_memory kind);
/* A reduction of the interior, the same host value on every rank. `result` holds one value of
 * the array's dtype, except: integer TESSERA_SUM/TESSERA_PROD give int64; TESSERA_NORM2 gives
 * the real type (float for f32/c64, double otherwise). MIN/MAX need a real dtype. */
tessera_status tessera_reduce(tessera_array a, tessera_reduce_op op, void* result);

/* ---- Algorithms that make new arrays (collective; *out is a new handle on a's device) ---- */
/* The flattened array (row-major) sorted, or (indices != 0) the i64 permutation that sorts it:
 * new 1-D arrays. Integer and real dtypes. */
tessera_status tessera_sort(tessera_array a, int indices, tessera_array* out);
/* Sorted along `axis` (negative counts from the end), or (indices != 0) the i64 indices along the
 * axis that sort each row (stable): numpy.sort(a, axis) / argsort(a, axis), on a's layout (no
 * halos). Integer and real dtypes. */
tessera_status tessera_sort_axis(tessera_array a, int indices, int axis, tessera_array* out);
/* Cumulative sum (product != 0: product) along `axis` (negative counts from the end), on a's
 * layout; integer and bool arrays accumulate in i64. */
tessera_status tessera_scan(tessera_array a, int product, int axis, tessera_array* out);
/* SUM, PROD, MIN, MAX, ARGMIN or ARGMAX along `axis`: that axis has extent 1 in the result (i64
 * global indices along the axis for ARGMIN/ARGMAX; integer sums in i64). */
tessera_status tessera_reduce_axis(tessera_array a, tessera_reduce_op op, int axis, tessera_array* out);
/* The flat (row-major) global index of the first minimum (is_max = 0) or maximum. */
tessera_status tessera_argreduce(tessera_array a, int is_max, int64_t* index);
/* a @ b for 2-D arrays (or 3-D, batched along axis 0) of one floating dtype (SUMMA). */
tessera_status tessera_matmul(tessera_array a, tessera_array b, tessera_array* out);
/* The elements of a at the flat indices `idx` (a 1-D i64 array): a new 1-D array of idx's blocks. */
tessera_status tessera_take(tessera_array a, tessera_array idx, tessera_array* out);
/* a.flat[idx[i]] = v[i] (idx a 1-D i64 array, v a 1-D array of a's dtype on idx's blocks). */
tessera_status tessera_put(tessera_array a, tessera_array idx, tessera_array v);
/* a's elements where the bool array `mask` (a's layout) is true, row-major: a new 1-D array. */
tessera_status tessera_compress(tessera_array mask, tessera_array a, tessera_array* out);
/* a flattened (row-major) to a new 1-D array. */
tessera_status tessera_ravel(tessera_array a, tessera_array* out);
/* numpy.histogram(a, bins, (lo, hi))'s counts into `counts` (bins values, on every rank). */
tessera_status tessera_histogram(tessera_array a, int64_t bins, double lo, double hi, int64_t* counts);
/* The flat indices of the nonzero elements (numpy.flatnonzero): a new 1-D i64 array. */
tessera_status tessera_flatnonzero(tessera_array a, tessera_array* out);

/* ---- FFT plans (collective) ---- */
/* For arrays of layout `in` (the real-space shape for R2C/C2R; ndim 1..3). dtype: complex for C2C,
 * real for R2C/C2R (one plan: forward is real to complex, backward complex to real).
 * same_layout_output: forward returns the input layout (needed for in-place transforms on several
 * ranks). */
tessera_status tessera_fft_plan_create(tessera_layout in, tessera_dtype dtype, tessera_fft_type type,
                                       tessera_fft_decomposition decomposition, int same_layout_output,
                                       tessera_fft_plan* out);
tessera_status tessera_fft_plan_free(tessera_fft_plan plan);
/* New handles to the layouts forward() takes and returns (the output's last axis is n/2+1 for R2C). */
tessera_status tessera_fft_plan_layouts(tessera_fft_plan plan, tessera_layout* in, tessera_layout* out);
/* Transforms `in` into `out` (out of place), or in place when in and out are the same array
 * (C2C whose input and output layouts are equal). Forward: in on the input layout, out on the
 * output layout with the complex dtype; backward the reverse. norm as numpy's norm=. */
tessera_status tessera_fft_execute(tessera_fft_plan plan, tessera_fft_direction direction, tessera_array in,
                                   tessera_array out, tessera_fft_norm norm);
/* The same into a new array (*out; free it with tessera_array_free): the plan's output layout
 * forward, its input layout backward. Saves execute's copy into the caller's array. */
tessera_status tessera_fft_execute_new(tessera_fft_plan plan, tessera_fft_direction direction, tessera_array in,
                                       tessera_fft_norm norm, tessera_array* out);

/* backward(forward(in) times a spectral factor) into a new array on the plan's input layout
 * (*out): TESSERA_SPECTRAL_INVERSE_LAPLACIAN -1/|k|^2 (0 at k = 0: the u of zero mean with
 * lap u = in), TESSERA_SPECTRAL_LAPLACIAN -|k|^2, k the angular wavenumbers of a periodic box of
 * side lengths[a] along axis a (lengths: one per axis, > 0; null: 2 pi each). One 1/N in all. On
 * one GPU, an R2C plan of a 3-D array whose first axis is 256, 512 or 1024 does it in three passes
 * over memory (docs/fft.md, "A spectral solve in one call"). */
tessera_status tessera_fft_apply_spectral(tessera_fft_plan plan, tessera_array in, tessera_fft_spectral kind,
                                          const double* lengths, tessera_array* out);

/* Transforms along `axes` only (numpy.fft.fftn(x, axes=...); negative axes count from the end),
 * none of them split over more than one rank: each rank transforms its block, not collective.
 * C2C: complex in and out, either direction. R2C (forward): real in, complex out with n/2+1
 * values along the last of `axes`. C2R (backward): its inverse, to `n` real values there (n is
 * read for C2R only). The result (*out) has in's blocks, no halos. */
tessera_status tessera_fft_along(tessera_array in, tessera_fft_type type, tessera_fft_direction direction, int naxes,
                                 const int* axes, int64_t n, tessera_fft_norm norm, tessera_array* out);

/* ---- Files (collective) ---- */
/* One .npy file of the interior, which numpy.load reads; load fills an existing array (dtype and
 * global shape must match the file). */
tessera_status tessera_save_npy(tessera_array a, const char* path);
tessera_status tessera_load_npy(tessera_array a, const char* path);
/* A Zarr v2 directory store; chunks: ndim values, or NULL for the largest block of the layout;
 * zlib: compress the chunks. */
tessera_status tessera_save_zarr(tessera_array a, const char* dir, const int64_t* chunks, int zlib);
/* The same with every option: format 2 or 3; codec NULL or "none" (raw), "zlib" (v3 writes it as
 * gzip), "gzip", "zstd", "blosc" (LZ4 with byte shuffle, zarr-python's default) or "blosc-" and
 * Blosc's compressor ("blosc-lz4", "blosc-lz4hc", "blosc-blosclz", "blosc-zstd", "blosc-zlib");
 * level: the codec's (zlib, gzip, Blosc 0-9; zstd 1-22), -1 for its default; shard: format 3 only,
 * ndim values, each a multiple of the chunk's (one file per shard: its inner chunks and an index),
 * or NULL; durable: every file fsynced before the call returns. */
tessera_status tessera_save_zarr_ex(tessera_array a, const char* dir, const int64_t* chunks, int format,
                                    const char* codec, int level, const int64_t* shard, int durable);
tessera_status tessera_load_zarr(tessera_array a, const char* dir);

/* Dataset `name` ("p", "fields/p") of the HDF5 file `path` (created, or the dataset replaced) by
 * parallel HDF5; chunks: ndim values or NULL (contiguous); deflate: gzip level 0-9 (needs chunks).
 * load fills an existing array (dtype and global shape must match the dataset). Builds without
 * parallel HDF5 return TESSERA_ERROR_BACKEND_UNAVAILABLE. */
tessera_status tessera_save_hdf5(tessera_array a, const char* path, const char* name, const int64_t* chunks,
                                 int deflate);
tessera_status tessera_load_hdf5(tessera_array a, const char* path, const char* name);
/* The XDMF sidecar (ParaView, VisIt) of dataset `name` of HDF5 file `h5` (a path relative to the
 * .xmf file): node values of a uniform 2-D or 3-D grid of `shape`, `spacing` apart, origin 0; real
 * and integer dtypes. Local: one rank calls it. */
tessera_status tessera_write_xdmf(const char* xmf, const char* h5, const char* name, int ndim, const int64_t* shape,
                                 tessera_dtype dtype, double spacing);
/* Checkpoints: named arrays plus step, time and string attributes, replaced atomically at commit. */
tessera_status tessera_checkpoint_writer_create(tessera_grid grid, const char* dir, tessera_checkpoint_writer* out);
tessera_status tessera_checkpoint_set_step(tessera_checkpoint_writer w, int64_t step);
tessera_status tessera_checkpoint_set_time(tessera_checkpoint_writer w, double time);
tessera_status tessera_checkpoint_set_attribute(tessera_checkpoint_writer w, const char* key, const char* value);
tessera_status tessera_checkpoint_add(tessera_checkpoint_writer w, const char* name, tessera_array a);
tessera_status tessera_checkpoint_commit(tessera_checkpoint_writer w);
/* Without a commit the temporary directory is removed. */
tessera_status tessera_checkpoint_writer_free(tessera_checkpoint_writer w);
tessera_status tessera_checkpoint_reader_create(tessera_grid grid, const char* dir, tessera_checkpoint_reader* out);
/* step and time; either may be NULL. */
tessera_status tessera_checkpoint_info(tessera_checkpoint_reader r, int64_t* step, double* time);
/* The attribute's value into buf (truncated to len, NUL-terminated). */
tessera_status tessera_checkpoint_get_attribute(tessera_checkpoint_reader r, const char* key, char* buf, size_t len);
/* Fills an existing array (any layout and device) with field `name`. */
tessera_status tessera_checkpoint_load(tessera_checkpoint_reader r, const char* name, tessera_array a);
tessera_status tessera_checkpoint_reader_free(tessera_checkpoint_reader r);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_TESSERA_H */
