// The accumulator operand lists of the wgmma wrappers in hopper.cuh. An inline-assembly
// operand list can come from neither a template nor a loop, and one wgmma names up to 128
// registers, so these macros write them: GEMMKIT_D<n>_OPERANDS is the "{%0, ..., %n-1}"
// register list of the instruction text, GEMMKIT_D<k>(i) the k float operands d[i..i+k-1]
// ("+f": read and written), GEMMKIT_R<k>(i) the same for int32 accumulators ("+r"). They
// expect the accumulator array to be called d, and are used only by hopper.cuh's wrappers.
#pragma once

#define GEMMKIT_D8(i)                                                                         \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define GEMMKIT_D64(i)                                                                    \
  GEMMKIT_D8(i), GEMMKIT_D8(i + 8), GEMMKIT_D8(i + 16), GEMMKIT_D8(i + 24), GEMMKIT_D8(i + 32), \
      GEMMKIT_D8(i + 40), GEMMKIT_D8(i + 48), GEMMKIT_D8(i + 56)
#define GEMMKIT_D128_OPERANDS                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "  \
  "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "  \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, "    \
  "%108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "  \
  "%123, %124, %125, %126, %127}"
#define GEMMKIT_D64_OPERANDS                                                                     \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
  "%56, %57, %58, %59, %60, %61, %62, %63}"
#define GEMMKIT_D32_OPERANDS                                                                     \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define GEMMKIT_D104_OPERANDS                                                                      \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "  \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "   \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "   \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "   \
  "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "   \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103}"
#define GEMMKIT_D32(i) GEMMKIT_D8(i), GEMMKIT_D8(i + 8), GEMMKIT_D8(i + 16), GEMMKIT_D8(i + 24)
#define GEMMKIT_R8(i)                                                                         \
  "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3]), "+r"(d[i + 4]), "+r"(d[i + 5]), \
      "+r"(d[i + 6]), "+r"(d[i + 7])
#define GEMMKIT_R32(i) GEMMKIT_R8(i), GEMMKIT_R8(i + 8), GEMMKIT_R8(i + 16), GEMMKIT_R8(i + 24)
#define GEMMKIT_R64(i) GEMMKIT_R32(i), GEMMKIT_R32(i + 32)
#define GEMMKIT_R104(i) GEMMKIT_R64(i), GEMMKIT_R32(i + 64), GEMMKIT_R8(i + 96)
