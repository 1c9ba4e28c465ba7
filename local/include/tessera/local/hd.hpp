// TESSERA_HD marks functions that run on the host and, compiled by nvcc, on the device too.
// The one definition: every header that needs it includes this one.
#pragma once

#ifdef __CUDACC__
#define TESSERA_HD __host__ __device__
#else
#define TESSERA_HD
#endif
