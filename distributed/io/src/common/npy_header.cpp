// .npy header parsing and writing (detail/npy_header.hpp): no MPI, no CUDA, fuzzed by tests/fuzz.
#include "../detail/npy_header.hpp"

#include <limits>

namespace tessera::io {
namespace {

using index_t = std::int64_t;
constexpr char kMagic[] = "\x93NUMPY";

// A strict reader of the Python literal numpy writes: {'key': value, ...} with string, bool and
// tuple-of-int values.
class DictParser {
 public:
  explicit DictParser(std::string_view s) : s_(s) {}

  NpyHeader parse() {
    NpyHeader h;
    bool seen[3] = {false, false, false};
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        dup(seen[0], key);
        h.descr = string_literal();
      } else if (key == "fortran_order") {
        dup(seen[1], key);
        h.fortran_order = boolean();
      } else if (key == "shape") {
        dup(seen[2], key);
        h.shape = tuple();
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_ws();
      if (peek() == ',') ++i_;
      else if (peek() != '}') fail("expected ',' or '}'");
    }
    ++i_;
    for (; i_ < s_.size(); ++i_)
      if (s_[i_] != ' ' && s_[i_] != '\n' && s_[i_] != '\t' && s_[i_] != '\r' && s_[i_] != '\0') fail("trailing characters after the dict");
    if (!seen[0] || !seen[1] || !seen[2]) fail("the dict needs 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw IoError("bad .npy header: " + what + " at character " + std::to_string(i_) + " of '" + std::string(s_.substr(0, 200)) + "'");
  }
  void dup(bool& seen, const std::string& key) {
    if (seen) fail("duplicate key '" + key + "'");
    seen = true;
  }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() {
    if (i_ >= s_.size()) fail("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string_literal() {
    skip_ws();
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a string");
    const std::size_t start = ++i_;
    while (peek() != q) {
      if (s_[i_] == '\\' || static_cast<unsigned char>(s_[i_]) < 0x20) fail("unsupported character in a string");
      ++i_;
    }
    return std::string(s_.substr(start, i_++ - start));
  }
  bool boolean() {
    skip_ws();
    if (s_.substr(i_, 4) == "True") return i_ += 4, true;
    if (s_.substr(i_, 5) == "False") return i_ += 5, false;
    fail("expected True or False");
  }
  std::vector<index_t> tuple() {
    std::vector<index_t> v;
    expect('(');
    bool trailing_comma = false;
    while (true) {
      skip_ws();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') fail("expected a non-negative integer");
      index_t x = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        if (x > (std::numeric_limits<index_t>::max() - 9) / 10) fail("extent too large");
        x = x * 10 + (s_[i_++] - '0');
      }
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
      v.push_back(x);
      skip_ws();
      trailing_comma = peek() == ',';
      if (trailing_comma) ++i_;
      else if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++i_;
    if (v.size() == 1 && !trailing_comma) fail("a one-element shape needs a trailing comma");
    index_t n = 1;
    for (index_t x : v) {
      if (x != 0 && n > std::numeric_limits<index_t>::max() / x) fail("shape too large");
      n *= x;
    }
    return v;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

std::string shape_text(const std::vector<index_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

}  // namespace

NpyHeader parse_npy_header(std::string_view b) {
  if (b.size() < 10) throw IoError("bad .npy header: file shorter than the 10-byte preamble");
  if (b.substr(0, 6) != std::string_view(kMagic, 6)) throw IoError("bad .npy header: wrong magic (not a .npy file)");
  const auto u8 = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(b[i])); };
  const std::size_t major = u8(6), minor = u8(7);
  if (major < 1 || major > 3 || minor != 0)
    throw IoError("bad .npy header: unsupported format version " + std::to_string(major) + "." + std::to_string(minor));
  std::size_t len = 0, start = 0;
  if (major == 1) {
    len = u8(8) | u8(9) << 8, start = 10;
  } else {
    if (b.size() < 12) throw IoError("bad .npy header: file shorter than the 12-byte preamble");
    len = u8(8) | u8(9) << 8 | u8(10) << 16 | u8(11) << 24, start = 12;
  }
  if (b.size() - start < len)
    throw IoError("bad .npy header: header of " + std::to_string(len) + " bytes but only " + std::to_string(b.size() - start) + " present");
  NpyHeader h = DictParser(b.substr(start, len)).parse();
  h.data_offset = start + len;
  return h;
}

std::string make_npy_header(const std::string& descr, const std::vector<index_t>& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  for (int major : {1, 2}) {
    const std::size_t pre = major == 1 ? 10 : 12;
    const std::size_t total = (pre + dict.size() + 1 + 63) / 64 * 64;
    const std::size_t len = total - pre;
    if (major == 1 && len > 0xffff) continue;
    std::string h(kMagic, 6);
    h += static_cast<char>(major);
    h += '\0';
    for (std::size_t i = 0; i < pre - 8; ++i) h += static_cast<char>((len >> (8 * i)) & 0xff);
    h += dict;
    h.append(total - h.size() - 1, ' ');
    return h + '\n';
  }
  return {};
}

}  // namespace tessera::io
