! Fortran 2008 module `tessera` over the C API (tessera/tessera.h), with iso_c_binding.
!  - Shapes, halos and block bounds are in Fortran order: a Fortran array u(nx, ny, nz) is the
!    C-order array [nz][ny][nx], and the module reverses every per-axis list on the way (grid
!    dimensions too, so that "array axis i over grid axis i" reads the same in both languages).
!  - Block bounds are 1-based and inclusive: this rank holds u(lo(1):hi(1), ...) of the global array.
!  - split(i): the (1-based) grid axis that array axis i is divided over, 0 for none.
!  - Every procedure takes an optional `stat`: present, it receives the status (TESSERA_SUCCESS = 0;
!    the message is tessera_last_error()); absent, a failure prints the message and stops.
!  - Communicators: integer (mpi module) or type(MPI_Comm) (mpi_f08, when built with it).
!  - Buffers are contiguous arrays of any rank (assumed rank); their dtype is given explicitly.
module tessera
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
#ifdef TESSERA_HAVE_MPI_F08
  use mpi_f08, only: MPI_Comm
#endif
  implicit none
  private

  type, bind(c), public :: tessera_runtime
    integer(c_int64_t) :: id = 0
  end type
  type, bind(c), public :: tessera_grid
    integer(c_int64_t) :: id = 0
  end type
  type, bind(c), public :: tessera_layout
    integer(c_int64_t) :: id = 0
  end type
  type, bind(c), public :: tessera_array
    integer(c_int64_t) :: id = 0
  end type
  type, bind(c), public :: tessera_halo
    integer(c_int64_t) :: id = 0
  end type
  type, bind(c), public :: tessera_fft_plan
    integer(c_int64_t) :: id = 0
  end type
  type, bind(c), public :: tessera_checkpoint_writer
    integer(c_int64_t) :: id = 0
  end type
  type, bind(c), public :: tessera_checkpoint_reader
    integer(c_int64_t) :: id = 0
  end type

  ! The C enumerations' values.
  integer(c_int), parameter, public :: TESSERA_SUCCESS = 0, TESSERA_ERROR_INVALID_ARGUMENT = 1, &
    TESSERA_ERROR_INVALID_HANDLE = 2, TESSERA_ERROR_SHAPE_MISMATCH = 3, TESSERA_ERROR_LAYOUT_MISMATCH = 4, &
    TESSERA_ERROR_DEVICE_MISMATCH = 5, TESSERA_ERROR_DTYPE_MISMATCH = 6, TESSERA_ERROR_OUT_OF_MEMORY = 7, &
    TESSERA_ERROR_BACKEND_UNAVAILABLE = 8, TESSERA_ERROR_IO = 9, TESSERA_ERROR_COMM = 10, &
    TESSERA_ERROR_CUDA = 11, TESSERA_ERROR_CONSISTENCY = 12, TESSERA_ERROR_BUSY = 13, TESSERA_ERROR_COMPILE = 14, &
    TESSERA_ERROR_INTERNAL = 99
  integer(c_int), parameter, public :: TESSERA_F32 = 0, TESSERA_F64 = 1, TESSERA_C64 = 2, TESSERA_C128 = 3, &
    TESSERA_I32 = 4, TESSERA_I64 = 5, TESSERA_BOOL = 6
  integer(c_int), parameter, public :: TESSERA_MEMORY_HOST = 0, TESSERA_MEMORY_DEVICE = 1
  integer(c_int), parameter, public :: TESSERA_SUM = 0, TESSERA_PROD = 1, TESSERA_MIN = 2, TESSERA_MAX = 3, &
    TESSERA_NORM2 = 4, TESSERA_ARGMIN = 5, TESSERA_ARGMAX = 6
  integer(c_int), parameter, public :: TESSERA_FFT_C2C = 0, TESSERA_FFT_R2C = 1, TESSERA_FFT_C2R = 2
  integer(c_int), parameter, public :: TESSERA_NORM_BACKWARD = 0, TESSERA_NORM_ORTHO = 1, &
    TESSERA_NORM_FORWARD = 2, TESSERA_NORM_NONE = 3
  integer(c_int), parameter, public :: TESSERA_SPECTRAL_INVERSE_LAPLACIAN = 1, TESSERA_SPECTRAL_LAPLACIAN = 2
  integer(c_int), parameter, public :: TESSERA_FFT_FORWARD = -1, TESSERA_FFT_BACKWARD = 1
  integer(c_int), parameter, public :: TESSERA_DECOMP_AUTO = 0, TESSERA_DECOMP_SLAB = 1, TESSERA_DECOMP_PENCIL = 2

  interface tessera_init
    module procedure init_int
#ifdef TESSERA_HAVE_MPI_F08
    module procedure init_f08
#endif
  end interface

  public :: tessera_init, tessera_finalize, tessera_rank, tessera_last_error, tessera_live_handles
  public :: tessera_malloc, tessera_free, tessera_memcpy
  public :: tessera_grid_create, tessera_grid_free, tessera_layout_create, tessera_layout_free, tessera_layout_info
  public :: tessera_array_create, tessera_array_adopt, tessera_array_adopt_ptr, tessera_array_free
  public :: tessera_array_layout, tessera_array_read, tessera_array_write, tessera_array_synchronize
  public :: tessera_halo_exchange, tessera_halo_exchange_begin, tessera_halo_exchange_end
  public :: tessera_redistribute, tessera_gather, tessera_scatter, tessera_reduce
  public :: tessera_fft_plan_create, tessera_fft_plan_free, tessera_fft_plan_layouts, tessera_fft_execute, &
    tessera_fft_apply_spectral
  public :: tessera_save_npy, tessera_load_npy, tessera_save_zarr, tessera_load_zarr
  public :: tessera_checkpoint_writer_create, tessera_checkpoint_set_step, tessera_checkpoint_set_time
  public :: tessera_checkpoint_add, tessera_checkpoint_commit, tessera_checkpoint_writer_free
  public :: tessera_checkpoint_set_attribute, tessera_checkpoint_get_attribute
  public :: tessera_checkpoint_reader_create, tessera_checkpoint_info, tessera_checkpoint_load
  public :: tessera_checkpoint_reader_free

#include "tessera_c_bindings.inc"

  interface
    integer(c_int) function c_grid_info(grid, ndims, dims, coords) bind(c, name="tessera_grid_info")
      import; type(tessera_grid), value :: grid; integer(c_int) :: ndims; type(c_ptr), value :: dims, coords
    end function
  end interface

contains

#include "tessera_procedures.inc"

end module tessera
