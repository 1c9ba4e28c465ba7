#include "../detail/reduce_all.inc"
