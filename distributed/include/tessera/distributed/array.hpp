// distributed::Array<T, Rank>: a Layout, a device and this rank's shard, a local::Array of the
// padded shape (block plus halos); interior() is the block without halos. Copies are handles
// to the same shard. Work on the array is ordered on its stream: the device's default stream,
// or the one given when adopting memory (the caller keeps that Stream alive).
#pragma once
#include <memory>

#include "tessera/distributed/layout.hpp"
#include "tessera/local/array.hpp"
#include "tessera/local/stream.hpp"

namespace tessera::distributed {

template <class T, int Rank> class Array;
template <class T, int Rank> class HaloExchange;
template <class T, int Rank> HaloExchange<T, Rank> exchange_halos_begin(Array<T, Rank>& a);  // halo.hpp

/// A sharded n-d array: a Layout, a device and this rank's shard.
template <class T, int Rank>
class Array {
 public:
  using value_type = T;
  static constexpr int rank = Rank;

  /// An empty handle.
  Array() = default;
  /// Uninitialized shard on `d`.
  Array(Layout<Rank> layout, Device d)
      : layout_(std::make_shared<Layout<Rank>>(std::move(layout))),
        shard_(layout_->padded_shape(), d),
        stream_(&Stream::default_for(d)) {}

  /// Adopts memory the caller owns (no copy): `data` holds this rank's padded shard, row-major,
  /// on device `d`; work is ordered on `s` (or the device's default stream).
  static Array adopt(T* data, Layout<Rank> layout, Device d, const Stream& s) {
    if (s.device() != d)
      throw DeviceMismatch("distributed::Array::adopt: memory on " + d.str() + " but stream on " + s.device().str());
    Array a;
    a.layout_ = std::make_shared<Layout<Rank>>(std::move(layout));
    a.shard_ = local::Array<T, Rank>::view(data, a.layout_->padded_shape(), d);
    a.stream_ = &s;
    return a;
  }
  static Array adopt(T* data, Layout<Rank> layout, Device d) { return adopt(data, std::move(layout), d, Stream::default_for(d)); }
  /// A shard of shape padded_shape() that the array then shares (a view of a larger buffer
  /// keeps that buffer alive); work on the device's default stream.
  static Array wrap(Layout<Rank> layout, local::Array<T, Rank> shard) {
    if (shard.shape() != layout.padded_shape())
      throw ShapeMismatch("distributed::Array::wrap: shard " + local::shape_str(shard.shape()) + " for padded shape " +
                              local::shape_str(layout.padded_shape()),
                          shard.device());
    Array a;
    a.layout_ = std::make_shared<Layout<Rank>>(std::move(layout));
    a.stream_ = &Stream::default_for(shard.device());
    a.shard_ = std::move(shard);
    return a;
  }

  /// Layout, device, stream, global shape and size.
  const Layout<Rank>& layout() const noexcept { return *layout_; }
  Device device() const noexcept { return shard_.device(); }
  const Stream& stream() const noexcept { return *stream_; }
  const Index<Rank>& global_shape() const noexcept { return layout_->global_shape(); }
  index_t global_size() const { return layout_->global_size(); }
  /// This rank's shard (with halos), and its block without halos (a view).
  const local::Array<T, Rank>& local() const noexcept { return shard_; }
  local::Array<T, Rank> interior() const {
    local::Array<T, Rank> v = shard_;
    const auto& h = layout_->halo();
    for (int a = 0; a < Rank; ++a)
      if (h[a] > 0) v = v.slice(a, h[a], shard_.shape(a) - h[a]);
    return v;
  }
  /// This rank's block in global indices.
  Box<Rank> local_box() const { return layout_->local_box(); }

  /// Halo exchange (include tessera/distributed/halo.hpp): u.exchange_halos(), or split-phase
  /// auto h = u.exchange_halos_begin(); ...; h.end().
  HaloExchange<T, Rank> exchange_halos_begin() { return distributed::exchange_halos_begin(*this); }
  void exchange_halos() { exchange_halos_begin().end(); }

  /// Evaluates a distributed expression (elementwise.hpp) into this array's interior.
  template <class E>
    requires requires { typename E::is_distributed_expr; }
  Array& operator=(const E& e);

 private:
  std::shared_ptr<const Layout<Rank>> layout_;
  local::Array<T, Rank> shard_;
  const Stream* stream_ = nullptr;
};

}  // namespace tessera::distributed
