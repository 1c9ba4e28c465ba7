#include "../detail/basic_ops_all.inc"
