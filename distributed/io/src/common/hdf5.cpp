// save_hdf5/load_hdf5 (tessera/io/hdf5.hpp): parallel HDF5 with collective hyperslab transfers.
#include "tessera/io/hdf5.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <complex>
#include <filesystem>

#include "../detail/error_text.hpp"
#include "../detail/mpiio_policy.hpp"
#include "tessera/distributed/consistency.hpp"
#include "tessera/local/basic_ops.hpp"
#include "tessera/local/element_types.hpp"

namespace tessera::io {
namespace {

// An HDF5 handle closed by its own close function at scope exit.
struct H {
  hid_t id = H5I_INVALID_HID;
  herr_t (*close)(hid_t) = nullptr;
  H(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  H(const H&) = delete;
  H& operator=(const H&) = delete;
  ~H() {
    if (id >= 0 && close) close(id);
  }
  operator hid_t() const { return id; }
};

// The memory type of T, as h5py writes it (complex: compound {r, i}; bool: enum int8).
template <class T>
hid_t mem_type() {
  if constexpr (std::is_same_v<T, bool>) {
    const hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
    std::int8_t v = 0;
    H5Tenum_insert(t, "FALSE", &v);
    v = 1;
    H5Tenum_insert(t, "TRUE", &v);
    return t;
  } else if constexpr (std::is_same_v<T, std::int32_t>) return H5Tcopy(H5T_NATIVE_INT32);
  else if constexpr (std::is_same_v<T, std::int64_t>) return H5Tcopy(H5T_NATIVE_INT64);
  else if constexpr (std::is_same_v<T, float>) return H5Tcopy(H5T_NATIVE_FLOAT);
  else if constexpr (std::is_same_v<T, double>) return H5Tcopy(H5T_NATIVE_DOUBLE);
  else {
    using V = typename T::value_type;
    const hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(T));
    const hid_t part = std::is_same_v<V, float> ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    H5Tinsert(t, "r", 0, part);
    H5Tinsert(t, "i", sizeof(V), part);
    return t;
  }
}

// A file access list for MPI-IO on `comm`, with HDF5's error printing off (we throw instead).
hid_t mpio_fapl(MPI_Comm comm) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t p = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(p, comm, MPI_INFO_NULL);
  return p;
}

// This rank's hyperslab in `space` (none for ranks that write nothing).
template <int R>
void select_block(hid_t space, const distributed::Box<R>& b, bool take) {
  if (!take || b.empty()) return void(H5Sselect_none(space));
  hsize_t start[R > 0 ? R : 1], count[R > 0 ? R : 1];
  for (int a = 0; a < R; ++a) start[a] = static_cast<hsize_t>(b.lo[a]), count[a] = static_cast<hsize_t>(b.hi[a] - b.lo[a]);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
}

// Collective at the HDF5 level (filters need it), independent MPI-IO underneath where collective
// MPI-IO is unsafe (detail/mpiio_policy.hpp).
hid_t transfer_list() {
  const hid_t p = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(p, H5FD_MPIO_COLLECTIVE);
  if (!detail::collective_io()) H5Pset_dxpl_mpio_collective_opt(p, H5FD_MPIO_INDIVIDUAL_IO);
  return p;
}

}  // namespace

template <class T, int R>
void save_hdf5(const std::string& path, const std::string& name, const distributed::Array<T, R>& a, const Hdf5WriteOptions& o) {
  const auto agreed = distributed::check_call<T, R>("save_hdf5", a.layout(), a.device(), "path", path, "name", name);
  const auto& l = a.layout();
  const comm::ProcessGroup& group = l.grid().group();
  const MPI_Comm comm = group.mpi_comm();  // for HDF5's MPI-IO driver
  const std::string where = "save_hdf5: " + path + ": ";
  if (!o.chunks.empty() && o.chunks.size() != static_cast<std::size_t>(R)) throw InvalidArgument(where + "chunks of the wrong rank");
  if (o.deflate < 0 || o.deflate > 9 || (o.deflate > 0 && o.chunks.empty())) throw InvalidArgument(where + "deflate 1-9 needs chunks");
  const auto box = l.local_box();
  const bool writes = !box.empty() && l.owner(box.lo) == l.grid().rank();  // replicas write nothing
  a.stream().synchronize();
  local::Array<T, R> h(l.local_shape(), Device::host());
  local::copy(h, a.interior());

  std::int32_t exists = 0;
  if (group.rank() == 0) exists = std::filesystem::exists(path);
  group.broadcast(&exists, &exists, 1, DType::int32, 0, Stream::default_for(Device::host()));
  std::string err;
  H fapl(mpio_fapl(comm), H5Pclose);
  H file(exists ? H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl) : H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), H5Fclose);
  if (file < 0) err = where + (exists ? "cannot open for writing (not an HDF5 file?)" : "cannot create");
  group.agree<IoError>(err);
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0 && H5Ldelete(file, name.c_str(), H5P_DEFAULT) < 0)
    err = where + "cannot replace dataset " + name;
  group.agree<IoError>(err);
  hsize_t dims[R > 0 ? R : 1], chunk[R > 0 ? R : 1];
  for (int ax = 0; ax < R; ++ax) dims[ax] = static_cast<hsize_t>(l.global_shape()[ax]);
  H space(H5Screate_simple(R, dims, nullptr), H5Sclose);
  H dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!o.chunks.empty()) {
    for (int ax = 0; ax < R; ++ax) chunk[ax] = static_cast<hsize_t>(std::max<std::int64_t>(1, std::min<std::int64_t>(o.chunks[ax], dims[ax])));
    H5Pset_chunk(dcpl, R, chunk);
    if (o.deflate > 0) H5Pset_deflate(dcpl, static_cast<unsigned>(o.deflate));
  }
  // The groups of a name "a/b/c" are created where missing, as h5py does.
  H lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl, 1);
  H type(mem_type<T>(), H5Tclose);
  H set(H5Dcreate2(file, name.c_str(), type, space, lcpl, dcpl, H5P_DEFAULT), H5Dclose);
  if (set < 0) err = where + "cannot create dataset " + name;
  group.agree<IoError>(err);
  select_block<R>(space, box, writes);
  hsize_t n = writes ? static_cast<hsize_t>(box.size()) : 0;
  H mem(H5Screate_simple(1, &n, nullptr), H5Sclose);
  H dxpl(transfer_list(), H5Pclose);
  if (H5Dwrite(set, type, mem, space, dxpl, h.data()) < 0) err = where + "collective write of dataset " + name + " failed";
  group.agree<IoError>(err);
}

template <class T, int R>
distributed::Array<T, R> load_hdf5(const std::string& path, const std::string& name, const distributed::Layout<R>& l, Device d) {
  const auto agreed = distributed::check_call<T, R>("load_hdf5", l, d, "path", path, "name", name);
  const comm::ProcessGroup& group = l.grid().group();
  const MPI_Comm comm = group.mpi_comm();  // for HDF5's MPI-IO driver
  const std::string where = "load_hdf5: " + path + ": ";
  std::string err;
  H fapl(mpio_fapl(comm), H5Pclose);
  H file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), H5Fclose);
  if (file < 0) err = where + "cannot open (missing, or not an HDF5 file)";
  group.agree<IoError>(err);
  H set(H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0 ? H5Dopen2(file, name.c_str(), H5P_DEFAULT) : H5I_INVALID_HID, H5Dclose);
  if (set < 0) err = where + "no dataset " + name;
  group.agree<IoError>(err);
  H type(mem_type<T>(), H5Tclose);
  H ftype(H5Dget_type(set), H5Tclose);
  H space(H5Dget_space(set), H5Sclose);
  // The class and size must be T's (the byte order may differ: HDF5 converts it).
  if (H5Tget_class(ftype) != H5Tget_class(type) || H5Tget_size(ftype) != H5Tget_size(type))
    err = where + "dataset " + name + " is not of type " + dtype_name(dtype_v<T>);
  const int rank = H5Sget_simple_extent_ndims(space);
  hsize_t dims[32] = {};
  bool same = rank == R && H5Sget_simple_extent_dims(space, dims, nullptr) == R;
  for (int ax = 0; same && ax < R; ++ax) same = dims[ax] == static_cast<hsize_t>(l.global_shape()[ax]);
  if (err.empty() && !same) err = where + "dataset " + name + " has another shape than the layout's " + local::shape_str(l.global_shape());
  group.agree<IoError>(err);
  const auto box = l.local_box();
  select_block<R>(space, box, true);
  hsize_t n = static_cast<hsize_t>(box.size());
  H mem(H5Screate_simple(1, &n, nullptr), H5Sclose);
  local::Array<T, R> h(l.local_shape(), Device::host());
  H dxpl(transfer_list(), H5Pclose);
  if (H5Dread(set, type, mem, space, dxpl, h.data()) < 0) err = where + "collective read of dataset " + name + " failed";
  group.agree<IoError>(err);
  distributed::Array<T, R> a(l, d);
  local::copy(a.interior(), h);
  return a;
}

#define TESSERA_HDF5_INSTANTIATE(T, R)                                                                        \
  template void save_hdf5<T, R>(const std::string&, const std::string&, const distributed::Array<T, R>&,     \
                                const Hdf5WriteOptions&);                                                     \
  template distributed::Array<T, R> load_hdf5<T, R>(const std::string&, const std::string&,                  \
                                                    const distributed::Layout<R>&, Device);
#define TESSERA_HDF5_RANKS(T) TESSERA_FOR_EACH_RANK(TESSERA_HDF5_INSTANTIATE, T)
TESSERA_FOR_EACH_ELEMENT(TESSERA_HDF5_RANKS)
#undef TESSERA_HDF5_RANKS
#undef TESSERA_HDF5_INSTANTIATE

}  // namespace tessera::io
