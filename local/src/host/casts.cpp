#include "../detail/casts_all.inc"
