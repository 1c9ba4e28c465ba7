// write_xdmf (tessera/io/hdf5.hpp): the XDMF 3 sidecar of an HDF5 dataset. Needs no HDF5 itself.
#include <fstream>

#include "tessera/io/hdf5.hpp"

namespace tessera::io {
namespace {

// `s` as XML attribute value or text: the five special characters as entities, and tab, newline
// and carriage return as character references (a parser would turn them into spaces in an
// attribute). XML 1.0 has no way to write the other control characters.
std::string xml_escaped(const std::string& s, const std::string& what) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          throw InvalidArgument(what + " holds control character " + std::to_string(static_cast<int>(c)) + " at offset " +
                                std::to_string(i) + ", which XML 1.0 cannot represent");
        out += c;
    }
  }
  return out;
}

}  // namespace

void write_xdmf(const std::string& xmf, const std::string& h5, const std::string& name, const std::vector<std::int64_t>& shape,
                DType t, double spacing) {
  const auto fail = [&](const std::string& what) { throw IoError("write_xdmf " + xmf + ": " + what); };
  if (shape.size() != 2 && shape.size() != 3)
    throw InvalidArgument("write_xdmf " + xmf + ": " + std::to_string(shape.size()) +
                          " dimensions: XDMF uniform grids are 2-D or 3-D");
  if (!(spacing > 0)) throw InvalidArgument("write_xdmf " + xmf + ": spacing " + std::to_string(spacing) + " is not positive");
  const char* type = nullptr;
  int precision = 0;
  switch (t) {
    case DType::float32: type = "Float", precision = 4; break;
    case DType::float64: type = "Float", precision = 8; break;
    case DType::int32: type = "Int", precision = 4; break;
    case DType::int64: type = "Int", precision = 8; break;
    default: fail("complex and bool datasets have no XDMF number type");
  }
  std::string dims, origin, step;
  for (auto n : shape) dims += (dims.empty() ? "" : " ") + std::to_string(n);
  for (std::size_t a = 0; a < shape.size(); ++a)
    origin += a ? " 0" : "0", step += (a ? " " : "") + std::to_string(spacing);
  const std::string d = std::to_string(shape.size());
  // HDF5 paths are absolute from the file's root group: "/a/b" and "a/b" name the same dataset.
  const std::string path = name.empty() || name[0] != '/' ? name : name.substr(1);
  const std::string where = "write_xdmf " + xmf + ": the ";
  const std::string grid = xml_escaped(name, where + "dataset name");
  const std::string item = xml_escaped(h5, where + "file name") + ":/" + xml_escaped(path, where + "dataset name");
  std::ofstream f(xmf, std::ios::trunc);
  if (!f) fail("cannot create");
  f << "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"3.0\">\n  <Domain>\n"
    << "    <Grid Name=\"" << grid << "\" GridType=\"Uniform\">\n"
    << "      <Topology TopologyType=\"" << d << "DCoRectMesh\" Dimensions=\"" << dims << "\"/>\n"
    << "      <Geometry GeometryType=\"ORIGIN_DXDY" << (shape.size() == 3 ? "DZ" : "") << "\">\n"
    << "        <DataItem Format=\"XML\" Dimensions=\"" << d << "\">" << origin << "</DataItem>\n"
    << "        <DataItem Format=\"XML\" Dimensions=\"" << d << "\">" << step << "</DataItem>\n"
    << "      </Geometry>\n"
    << "      <Attribute Name=\"" << grid << "\" AttributeType=\"Scalar\" Center=\"Node\">\n"
    << "        <DataItem Format=\"HDF\" NumberType=\"" << type << "\" Precision=\"" << precision << "\" Dimensions=\"" << dims
    << "\">" << item << "</DataItem>\n"
    << "      </Attribute>\n    </Grid>\n  </Domain>\n</Xdmf>\n";
  if (!f.flush()) fail("cannot write");
}

}  // namespace tessera::io
