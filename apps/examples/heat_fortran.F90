! heat_fortran: du/dt = alpha * laplacian(u) on the 2-pi-periodic square, in Fortran with the
! `tessera` module. The program owns its arrays (u with one halo cell per side); Tessera adopts u
! and fills its halos from the neighbouring ranks (split-phase: the interior is updated while the
! faces travel). The sine mode decays as g**n under the scheme (5-point stencil, forward Euler) and
! as exp(-alpha*|k|^2*t) analytically: the run prints both errors and, with --check, exits 1 when
! either is out of tolerance (round-off for the first, the predicted discretization error for the
! second).
!   mpirun -np 4 heat_fortran [--n 64] [--steps 200] [--check]
program heat_fortran
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use tessera
  implicit none
  real(c_double), parameter :: pi = acos(-1.0_c_double), alpha = 1.0_c_double
  integer, parameter :: kx = 1, ky = 2
  real(c_double), allocatable, target :: u(:, :), unew(:, :)
  type(tessera_runtime) :: rt
  type(tessera_grid) :: grid
  type(tessera_layout) :: layout
  type(tessera_array) :: ua
  type(tessera_halo) :: h
  integer(c_int64_t) :: lo(2), hi(2)
  integer :: n, steps, step, i, j, rank, nranks
  logical :: check
  real(c_double) :: dx, dt, lam, g, t, err_scheme, err_exact, e(2), emax(2), predicted

  call MPI_Init()
  call parse_args(n, steps, check)
  call tessera_init(rt, MPI_COMM_WORLD)
  call tessera_rank(rt, rank, nranks)
  call tessera_grid_create(rt, 2, grid)
  call tessera_layout_create(grid, [int(n, c_int64_t), int(n, c_int64_t)], layout, halo=[1_c_int64_t, 1_c_int64_t], &
                             periodic=[.true., .true.])
  call tessera_layout_info(layout, lo=lo, hi=hi)
  allocate (u(lo(1) - 1:hi(1) + 1, lo(2) - 1:hi(2) + 1), unew(lo(1):hi(1), lo(2):hi(2)))
  call tessera_array_adopt(layout, TESSERA_F64, u, ua)

  dx = 2 * pi / n
  dt = 0.2_c_double * dx**2 / alpha
  do j = int(lo(2)), int(hi(2))
    do i = int(lo(1)), int(hi(1))
      u(i, j) = sin(kx * x(i)) * sin(ky * x(j))
    end do
  end do
  do step = 1, steps
    call tessera_halo_exchange_begin(ua, h)
    call update(int(lo(1)) + 1, int(hi(1)) - 1, int(lo(2)) + 1, int(hi(2)) - 1)  ! needs no halo
    call tessera_halo_exchange_end(h)
    call update(int(lo(1)), int(hi(1)), int(lo(2)), int(lo(2)))   ! the boundary shell
    call update(int(lo(1)), int(hi(1)), int(hi(2)), int(hi(2)))
    call update(int(lo(1)), int(lo(1)), int(lo(2)), int(hi(2)))
    call update(int(hi(1)), int(hi(1)), int(lo(2)), int(hi(2)))
    u(lo(1):hi(1), lo(2):hi(2)) = unew
  end do

  ! The mode's factor per step under the scheme, and the analytic one.
  lam = -4 / dx**2 * (sin(kx * dx / 2)**2 + sin(ky * dx / 2)**2)
  g = 1 + alpha * dt * lam
  t = steps * dt
  e = 0
  do j = int(lo(2)), int(hi(2))
    do i = int(lo(1)), int(hi(1))
      e(1) = max(e(1), abs(u(i, j) - g**steps * sin(kx * x(i)) * sin(ky * x(j))))
      e(2) = max(e(2), abs(u(i, j) - exp(-alpha * (kx**2 + ky**2) * t) * sin(kx * x(i)) * sin(ky * x(j))))
    end do
  end do
  call MPI_Allreduce(e, emax, 2, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  err_scheme = emax(1)
  err_exact = emax(2)
  ! Discretization error of the mode's decay rate: |exp(-a|k|^2 t) - g^n| to leading order.
  predicted = abs(exp(-alpha * (kx**2 + ky**2) * t) - g**steps)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,es10.3,a,es10.3,a,es10.3,a)', 'heat_fortran: ', n, '^2 on ', nranks, &
    ' ranks, ', steps, ' steps: max error vs scheme ', err_scheme, ', vs exact ', err_exact, ' (predicted ', predicted, ')'

  call tessera_array_free(ua)
  call tessera_layout_free(layout)
  call tessera_grid_free(grid)
  call tessera_finalize(rt)
  call MPI_Finalize()
  if (check .and. (err_scheme > 1e-12_c_double .or. abs(err_exact - predicted) > 0.1_c_double * predicted + 1e-12)) then
    if (rank == 0) print '(a)', 'heat_fortran: CHECK FAILED'
    error stop 1
  end if

contains

  real(c_double) function x(i)
    integer, intent(in) :: i
    x = (i - 1) * dx
  end function

  ! unew = u + alpha*dt*laplacian(u) on the cells [i0, i1] x [j0, j1].
  subroutine update(i0, i1, j0, j1)
    integer, intent(in) :: i0, i1, j0, j1
    integer :: ii, jj
    do jj = j0, j1
      do ii = i0, i1
        unew(ii, jj) = u(ii, jj) + alpha * dt / dx**2 * &
                       (u(ii - 1, jj) + u(ii + 1, jj) + u(ii, jj - 1) + u(ii, jj + 1) - 4 * u(ii, jj))
      end do
    end do
  end subroutine

  subroutine parse_args(n, steps, check)
    integer, intent(out) :: n, steps
    logical, intent(out) :: check
    character(len=64) :: arg
    integer :: k
    n = 64
    steps = 200
    check = .false.
    k = 1
    do while (k <= command_argument_count())
      call get_command_argument(k, arg)
      select case (trim(arg))
      case ('--n')
        k = k + 1
        call get_command_argument(k, arg)
        read (arg, *) n
      case ('--steps')
        k = k + 1
        call get_command_argument(k, arg)
        read (arg, *) steps
      case ('--check')
        check = .true.
      case default
        print '(a)', 'usage: heat_fortran [--n N] [--steps S] [--check]'
        error stop 2
      end select
      k = k + 1
    end do
  end subroutine
end program heat_fortran
