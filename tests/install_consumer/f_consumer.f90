! A Fortran program against an installed Tessera (tessera::fortran, module `tessera`): a halo
! exchange on a periodic u(nx, ny) with an integer communicator, checked against the serial values.
program f_consumer
  use, intrinsic :: iso_c_binding
  use mpi
  use tessera
  implicit none
  type(tessera_runtime) :: rt
  type(tessera_grid) :: grid
  type(tessera_layout) :: lay
  type(tessera_array) :: a
  real(c_double), allocatable, target :: u(:, :)
  real(c_double), target :: s
  integer(c_int64_t) :: lo(2), hi(2), i, j
  integer :: ierr
  logical :: ok
  call MPI_Init(ierr)
  call tessera_init(rt, MPI_COMM_WORLD)
  call tessera_grid_create(rt, 1, grid)
  call tessera_layout_create(grid, [10_c_int64_t, 12_c_int64_t], lay, halo=[0_c_int64_t, 1_c_int64_t], &
                             periodic=[.true., .true.])
  call tessera_layout_info(lay, lo=lo, hi=hi)
  allocate (u(lo(1):hi(1), lo(2) - 1:hi(2) + 1))
  do j = lo(2), hi(2)
    do i = lo(1), hi(1)
      u(i, j) = i + 100 * j
    end do
  end do
  call tessera_array_adopt(lay, TESSERA_F64, u, a)
  call tessera_halo_exchange(a)
  call tessera_reduce(a, TESSERA_SUM, s)
  ok = u(3, lo(2) - 1) == 3 + 100 * (modulo(lo(2) - 2, 12_c_int64_t) + 1) .and. s == 55 * 12 + 100 * 78 * 10
  call tessera_array_free(a)
  call tessera_layout_free(lay)
  call tessera_grid_free(grid)
  call tessera_finalize(rt)
  call MPI_Finalize(ierr)
  print '(a,l1)', 'f_consumer: ', ok
  if (.not. ok) error stop 1
end program
