// NVRTC only (see README.md): the tensor map a TMA kernel takes, laid out as the driver's.
#pragma once
typedef struct CUtensorMap_st {
  alignas(64) unsigned long long opaque[16];
} CUtensorMap;
