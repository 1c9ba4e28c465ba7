# cmake -DIN=<file> -DOUT=<file.cpp> -DSYMBOL=<name> -DNAMESPACE=<ns> -P EmbedFile.cmake
# Writes a C++ source that defines `const unsigned char SYMBOL[]` and `SYMBOL_size` with IN's bytes.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" body "${body}")
file(WRITE "${OUT}" "// Generated from ${IN} by cmake/EmbedFile.cmake.\n#include <cstddef>\nnamespace ${NAMESPACE} {\n"
     "alignas(64) extern const unsigned char ${SYMBOL}[] = {\n${body}0};\n"
     "extern const std::size_t ${SYMBOL}_size = ${bytes};\n}\n")
