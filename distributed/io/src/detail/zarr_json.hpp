// A small strict JSON parser (objects, arrays, strings, numbers, true/false/null) for `.zarray`
// and checkpoint.json.
// Throws std::runtime_error with the byte offset of the problem; the caller wraps it in IoError.
#pragma once
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::io::detail {

struct Json {
  enum Kind { null, boolean, number, string, array, object } kind = null;
  bool b = false;
  double num = 0;
  bool integral = false;  // written without fraction or exponent
  std::string str;  // a string's value, or a number's text as written (exact int64 parsing)
  std::vector<Json> items;
  std::map<std::string, Json> members;
};

class JsonParser {
 public:
  explicit JsonParser(std::string_view t) : t_(t) {}
  Json parse_document() {
    Json v = value(0);
    ws();
    if (p_ != t_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("bad JSON at byte " + std::to_string(p_) + ": " + what);
  }
  void ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    ws();
    if (p_ < t_.size() && t_[p_] == c) return ++p_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(std::string_view w) {
    if (t_.substr(p_, w.size()) == w) return p_ += w.size(), true;
    return false;
  }
  Json value(int depth) {
    if (depth > 64) fail("nesting too deep");
    ws();
    if (p_ >= t_.size()) fail("unexpected end");
    Json v;
    const char c = t_[p_];
    if (c == '{') {
      ++p_;
      v.kind = Json::object;
      if (eat('}')) return v;
      do {
        ws();
        std::string k = string_lit();
        expect(':');
        if (v.members.count(k)) fail("duplicate key \"" + k + "\"");
        v.members.emplace(std::move(k), value(depth + 1));
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++p_;
      v.kind = Json::array;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Json::string;
      v.str = string_lit();
    } else if (word("true")) {
      v.kind = Json::boolean, v.b = true;
    } else if (word("false")) {
      v.kind = Json::boolean;
    } else if (word("null")) {
    } else if (word("NaN") || word("Infinity")) {
      fail("non-standard number");
    } else {
      number(v);
    }
    return v;
  }
  std::string string_lit() {
    if (p_ >= t_.size() || t_[p_] != '"') fail("expected string");
    ++p_;
    std::string s;
    while (true) {
      if (p_ >= t_.size()) fail("unterminated string");
      const char c = t_[p_++];
      if (c == '"') return s;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        s += c;
        continue;
      }
      if (p_ >= t_.size()) fail("unterminated escape");
      const char e = t_[p_++];
      switch (e) {
        case '"': case '\\': case '/': s += e; break;
        case 'b': s += '\b'; break;
        case 'f': s += '\f'; break;
        case 'n': s += '\n'; break;
        case 'r': s += '\r'; break;
        case 't': s += '\t'; break;
        case 'u': {
          if (p_ + 4 > t_.size()) fail("short \\u escape");
          unsigned cp = 0;
          for (int i = 0; i < 4; ++i) {
            const char h = t_[p_++];
            if (!std::isxdigit(static_cast<unsigned char>(h))) fail("bad \\u escape");
            cp = cp * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
          }
          // Keys and values we use are ASCII; others are kept as UTF-8 (surrogates as-is).
          if (cp < 0x80) s += static_cast<char>(cp);
          else if (cp < 0x800) s += static_cast<char>(0xC0 | (cp >> 6)), s += static_cast<char>(0x80 | (cp & 0x3F));
          else
            s += static_cast<char>(0xE0 | (cp >> 12)), s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                s += static_cast<char>(0x80 | (cp & 0x3F));
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  void number(Json& v) {
    const std::size_t start = p_;
    auto digits = [&] {
      const std::size_t s = p_;
      while (p_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[p_]))) ++p_;
      return p_ - s;
    };
    if (p_ < t_.size() && t_[p_] == '-') ++p_;
    if (word("Infinity")) fail("non-standard number");
    const std::size_t int_start = p_;
    const std::size_t nd = digits();
    if (nd == 0) fail("unexpected character");
    if (nd > 1 && t_[int_start] == '0') fail("leading zero");
    v.integral = true;
    if (p_ < t_.size() && t_[p_] == '.') {
      ++p_, v.integral = false;
      if (!digits()) fail("digits expected after '.'");
    }
    if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
      ++p_, v.integral = false;
      if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) ++p_;
      if (!digits()) fail("digits expected in exponent");
    }
    v.kind = Json::number;
    v.str = std::string(t_.substr(start, p_ - start));
    v.num = std::strtod(v.str.c_str(), nullptr);
  }

  std::string_view t_;
  std::size_t p_ = 0;
};

}  // namespace tessera::io::detail
