! The Fortran module against serial references: Fortran-order shapes and 1-based bounds, halos of
! an adopted u(nx,ny,nz) (host array, or device memory with --device), gather, reductions,
! redistribute along a chosen (1-based) axis, and an R2C/C2R round trip whose halved axis is the
! first Fortran axis. Exit code 1 on any failure (agreed over the ranks).
program fortran_test
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use tessera
  implicit none
  integer(c_int64_t), parameter :: nx = 7, ny = 6, nz = 5
  type(tessera_runtime) :: rt
  type(tessera_grid) :: grid, line
  type(tessera_layout) :: lay, xsplit, rin, rout
  type(tessera_array) :: a, b, x, y, back, lapx, solved
  type(tessera_fft_plan) :: plan
  type(tessera_checkpoint_writer) :: w
  type(tessera_checkpoint_reader) :: r
  character(len=32) :: ckname, attr
  integer(c_int64_t) :: step
  real(c_double) :: time
  real(c_double), allocatable, target :: u(:, :, :), blk(:, :, :), g(:, :, :), r3(:, :, :)
  complex(c_double), allocatable, target :: spec(:, :, :)
  integer(c_int64_t) :: lo(3), hi(3), pad(3), shp(3), i, j, k
  integer :: rank, nranks, fails, total, st
  logical :: device, v3
  character(len=16) :: arg
  real(c_double), target :: s, m
  type(c_ptr) :: dptr

  call MPI_Init()
  device = .false.
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    device = trim(arg) == '--device'
  end if
  fails = 0
  if (device) then
    call tessera_init(rt, MPI_COMM_WORLD, 'cuda')
  else
    call tessera_init(rt, MPI_COMM_WORLD)
  end if
  call tessera_rank(rt, rank, nranks)
  call tessera_grid_create(rt, 2, grid)
  call tessera_layout_create(grid, [nx, ny, nz], lay, halo=[1_c_int64_t, 1_c_int64_t, 1_c_int64_t], &
                             periodic=[.true., .true., .true.])
  call tessera_layout_info(lay, lo=lo, hi=hi, padded=pad, shape=shp)
  call expect(all(shp == [nx, ny, nz]), 'global shape in Fortran order')
  call expect(all(pad == hi - lo + 3), 'padded extents')
  allocate (u(lo(1) - 1:hi(1) + 1, lo(2) - 1:hi(2) + 1, lo(3) - 1:hi(3) + 1), blk(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)))
  u = -1
  if (device) then
    call tessera_malloc(rt, TESSERA_MEMORY_DEVICE, int(size(u) * 8, c_size_t), dptr)
    call tessera_memcpy(rt, dptr, TESSERA_MEMORY_DEVICE, c_loc(u), TESSERA_MEMORY_HOST, int(size(u) * 8, c_size_t))
    call tessera_array_adopt_ptr(lay, TESSERA_F64, dptr, int(size(u), c_int64_t), TESSERA_MEMORY_DEVICE, a)
  else
    call tessera_array_adopt(lay, TESSERA_F64, u, a)
  end if
  do k = lo(3), hi(3)
    do j = lo(2), hi(2)
      do i = lo(1), hi(1)
        blk(i, j, k) = f(i, j, k)
      end do
    end do
  end do
  call tessera_array_write(a, blk)
  call tessera_halo_exchange(a)
  call tessera_array_synchronize(a)
  if (device) call tessera_memcpy(rt, c_loc(u), TESSERA_MEMORY_HOST, dptr, TESSERA_MEMORY_DEVICE, &
                                  int(size(u) * 8, c_size_t))
  do k = lo(3) - 1, hi(3) + 1
    do j = lo(2) - 1, hi(2) + 1
      do i = lo(1) - 1, hi(1) + 1
        if (u(i, j, k) /= f(wrap(i, nx), wrap(j, ny), wrap(k, nz))) then
          call expect(.false., 'halo cell')
          exit
        end if
      end do
    end do
  end do

  allocate (g(nx, ny, nz))
  call tessera_gather(a, 0, g)
  if (rank == 0) then
    do k = 1, nz
      do j = 1, ny
        do i = 1, nx
          if (g(i, j, k) /= f(i, j, k)) call expect(.false., 'gathered element')
        end do
      end do
    end do
  end if
  call tessera_reduce(a, TESSERA_SUM, s)
  call expect(s == sum_f(), 'sum')
  call tessera_reduce(a, TESSERA_MAX, m)
  call expect(m == f(nx, ny, nz), 'max')

  ! Redistribute onto a 1-D grid that splits the first Fortran axis only.
  call tessera_grid_create(rt, 1, line)
  call tessera_layout_create(line, [nx, ny, nz], xsplit, split=[1, 0, 0])
  call tessera_layout_info(xsplit, lo=lo, hi=hi)
  call expect(lo(2) == 1 .and. hi(2) == ny .and. lo(3) == 1 .and. hi(3) == nz, 'split=[1,0,0] splits x only')
  call tessera_array_create(xsplit, TESSERA_F64, b)
  call tessera_redistribute(a, b)
  deallocate (blk)
  allocate (blk(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)))
  call expect_f(b, 'redistributed element')

  ! A checkpoint of the halo'd array, read back onto the x-split layout.
  write (ckname, '(a,i0)') 'fortran_ckpt_np', nranks
  call tessera_checkpoint_writer_create(grid, trim(ckname), w)
  call tessera_checkpoint_set_step(w, 3_c_int64_t)
  call tessera_checkpoint_set_attribute(w, 'order', 'fortran')
  call tessera_checkpoint_add(w, 'u', a)
  call tessera_checkpoint_commit(w)
  call tessera_checkpoint_writer_free(w)
  call tessera_checkpoint_reader_create(line, trim(ckname), r)
  call tessera_checkpoint_info(r, step, time)
  call tessera_checkpoint_get_attribute(r, 'order', attr)
  call expect(step == 3 .and. attr == 'fortran', 'checkpoint metadata')
  blk = 0
  call tessera_array_write(b, blk)
  call tessera_checkpoint_load(r, 'u', b)
  call tessera_checkpoint_reader_free(r)
  call expect_f(b, 'checkpointed element')

  ! A Zarr v3 store (zstd at level 3, durable) of the halo'd array, loaded onto the x-split layout.
  write (ckname, '(a,i0,a)') 'fortran_np', nranks, '.zarr'
  call tessera_save_zarr(a, trim(ckname), compressor='zstd', format=3, level=3, durable=.true.)
  inquire (file=trim(ckname)//'/zarr.json', exist=v3)
  call expect(v3, 'format=3 writes zarr.json')
  blk = 0
  call tessera_array_write(b, blk)
  call tessera_load_zarr(b, trim(ckname))
  call expect_f(b, 'Zarr element')
  call tessera_save_zarr(a, trim(ckname), compressor='lz5', stat=st)
  call expect(st /= 0, 'an unknown codec fails')

  ! R2C: the halved axis is the first Fortran axis (the last C axis).
  call tessera_fft_plan_create(xsplit, TESSERA_F64, TESSERA_FFT_R2C, plan)
  call tessera_fft_plan_layouts(plan, rin, rout)
  call tessera_layout_info(rout, shape=shp)
  call expect(all(shp == [nx / 2 + 1, ny, nz]), 'R2C output shape in Fortran order')
  call tessera_array_create(rin, TESSERA_F64, x)
  call tessera_array_create(rout, TESSERA_C128, y)
  call tessera_array_create(rin, TESSERA_F64, back)
  call tessera_redistribute(a, x)
  call tessera_fft_execute(plan, TESSERA_FFT_FORWARD, x, y)
  allocate (spec(shp(1), shp(2), shp(3)))
  call tessera_gather(y, 0, spec)
  if (rank == 0) call expect(abs(spec(1, 1, 1) - sum_f()) < 1e-9 * sum_f(), 'DC term of the R2C transform')
  if (rank == 0) call expect(abs(spec(2, 1, 1) - dft_x1()) < 1e-9 * sum_f(), 'first x mode of the R2C transform')
  call tessera_fft_execute(plan, TESSERA_FFT_BACKWARD, y, back)
  allocate (r3(nx, ny, nz))
  call tessera_gather(back, 0, r3)
  if (rank == 0) call expect(maxval(abs(r3 - g)) < 1e-10 * maxval(abs(g)), 'R2C/C2R round trip')

  ! Spectral round trips: with the other sides huge, the Laplacian is d2/dx2 along the first Fortran
  ! axis alone, whose sum along that axis vanishes; the inverse Laplacian undoes the Laplacian
  ! (less the mean) on a box of sides 2, 3, 5.
  call tessera_fft_apply_spectral(plan, TESSERA_SPECTRAL_LAPLACIAN, x, lapx, &
                                  lengths=[8 * atan(1.0_c_double), 1e9_c_double, 1e9_c_double])
  call tessera_gather(lapx, 0, r3)
  if (rank == 0) call expect(maxval(abs(sum(r3, dim=1))) < 1e-9 * maxval(abs(r3)) .and. &
                             maxval(abs(r3)) > 1e-3 * maxval(abs(g)), 'a Laplacian along the first Fortran axis')
  call tessera_array_free(lapx)
  call tessera_fft_apply_spectral(plan, TESSERA_SPECTRAL_LAPLACIAN, x, lapx, lengths=[2.0_c_double, 3.0_c_double, &
                                  5.0_c_double])
  call tessera_fft_apply_spectral(plan, TESSERA_SPECTRAL_INVERSE_LAPLACIAN, lapx, solved, &
                                  lengths=[2.0_c_double, 3.0_c_double, 5.0_c_double])
  call tessera_gather(solved, 0, r3)
  if (rank == 0) call expect(maxval(abs(r3 - (g - sum(g) / size(g)))) < 1e-10 * maxval(abs(g)), &
                             'the inverse Laplacian of the Laplacian')
  call tessera_array_free(lapx)
  call tessera_array_free(solved)
  call tessera_fft_apply_spectral(plan, TESSERA_SPECTRAL_LAPLACIAN, x, lapx, lengths=[1.0_c_double, 2.0_c_double], &
                                  stat=st)
  call expect(st /= 0, 'two sides for a 3-D plan fail')

  call tessera_array_free(a)
  call tessera_array_free(b)
  call tessera_array_free(x)
  call tessera_array_free(y)
  call tessera_array_free(back)
  call tessera_fft_plan_free(plan)
  call tessera_layout_free(rin)
  call tessera_layout_free(rout)
  call tessera_layout_free(xsplit)
  call tessera_layout_free(lay)
  call tessera_grid_free(line)
  call tessera_grid_free(grid)
  if (device) call tessera_free(rt, TESSERA_MEMORY_DEVICE, dptr)
  call expect(tessera_live_handles() == 1, 'only the runtime left')
  call tessera_finalize(rt)
  call MPI_Allreduce(fails, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a,i0,a)', 'fortran_test on ', nranks, ' ranks: ', total, ' failed checks'
  call MPI_Finalize()
  if (total /= 0) error stop 1

contains

  real(c_double) function f(i, j, k)
    integer(c_int64_t), intent(in) :: i, j, k
    f = real(i + 10 * j + 100 * k, c_double)
  end function

  integer(c_int64_t) function wrap(i, n)
    integer(c_int64_t), intent(in) :: i, n
    wrap = modulo(i - 1, n) + 1
  end function

  real(c_double) function sum_f()
    integer(c_int64_t) :: ii, jj, kk
    sum_f = 0
    do kk = 1, nz
      do jj = 1, ny
        do ii = 1, nx
          sum_f = sum_f + f(ii, jj, kk)
        end do
      end do
    end do
  end function

  ! sum of f * exp(-2 pi i (x-1)/nx): the first mode along the first Fortran axis.
  complex(c_double) function dft_x1()
    integer(c_int64_t) :: ii, jj, kk
    real(c_double), parameter :: twopi = 2 * acos(-1.0_c_double)
    dft_x1 = 0
    do kk = 1, nz
      do jj = 1, ny
        do ii = 1, nx
          dft_x1 = dft_x1 + f(ii, jj, kk) * exp(cmplx(0, -twopi * (ii - 1) / nx, c_double))
        end do
      end do
    end do
  end function

  ! Array b (its block lo..hi) holds f: read into blk, compared element by element.
  subroutine expect_f(b, what)
    type(tessera_array), intent(in) :: b
    character(len=*), intent(in) :: what
    call tessera_array_read(b, blk)
    do k = lo(3), hi(3)
      do j = lo(2), hi(2)
        do i = lo(1), hi(1)
          if (blk(i, j, k) /= f(i, j, k)) call expect(.false., what)
        end do
      end do
    end do
  end subroutine

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      fails = fails + 1
      print '(a,i0,a,a)', '[rank ', rank, '] check failed: ', what
    end if
  end subroutine
end program fortran_test
